import { z } from 'zod';
import { MAX_CRITERIA, type Criterion, type GoalContract } from '../../shared/schemas/goal-contract';
import { asRole, noteDialect, withRolePrompt, type RunContext } from '../run/run-context';
import { callModel } from '../run/model-gate';
import { askStructured } from '../run/structured-answer';
import { answerFormat, commandsToPass, constraintsIn, workspacePath, writtenFiles } from './goal-reading';

export const SUBMIT_CONTRACT = 'submit_contract';

/** A criterion before it is numbered. */
type NewCriterion = { [Kind in Criterion['kind']]: Omit<Extract<Criterion, { kind: Kind }>, 'id'> }[Criterion['kind']];

/** The goal's own words, read without a model: the files it says to write, the commands it says must pass, the answer's form. */
function criteriaInWords(goal: string): NewCriterion[] {
  const files = writtenFiles(goal).map((path): NewCriterion => ({ kind: 'file_written', path, text: `${path} is written`, source: 'goal' }));
  const commands = commandsToPass(goal).map((command): NewCriterion => ({ kind: 'command_succeeds', command, text: `\`${command}\` runs and exits 0`, source: 'goal' }));
  const format = answerFormat(goal);
  const answer: NewCriterion[] = format ? [{ kind: 'answer_format', format, text: format === 'number' ? 'the answer is one number' : 'the answer is JSON', source: 'goal' }] : [];
  return [...files, ...commands, ...answer];
}

function numbered(criteria: readonly NewCriterion[]): Criterion[] {
  return criteria.slice(0, MAX_CRITERIA).map((criterion, index) => ({ ...criterion, id: `c${index + 1}` }) as Criterion);
}

/** The contract the goal's words state, with no model: what the run is checked against when the model adds nothing. */
export function contractFromGoal(goal: string): GoalContract {
  return contractOfWords(goal, criteriaInWords(goal));
}

function contractOfWords(goal: string, found: readonly NewCriterion[]): GoalContract {
  const criteria = numbered(found);
  return {
    goal: goal.trim().slice(0, 4000),
    criteria,
    deliverables: criteria.flatMap((criterion) => (criterion.kind === 'file_written' ? [criterion.path] : [])),
    constraints: constraintsIn(goal),
    outOfScope: [],
  };
}

const SubmitContractSchema = z.object({
  goal: z.string().min(1).max(4000),
  success_criteria: z
    .array(
      z.object({
        text: z.string().min(1).max(500),
        file: z.string().min(1).max(500).optional(),
        command: z.string().min(1).max(1000).optional(),
        value: z.string().min(1).max(500).optional(),
      }),
    )
    .max(MAX_CRITERIA),
  deliverables: z.array(z.string().min(1).max(500)).max(20).default([]),
  constraints: z.array(z.string().min(1).max(500)).max(20).default([]),
  out_of_scope: z.array(z.string().min(1).max(500)).max(20).default([]),
});
type SubmittedContract = z.infer<typeof SubmitContractSchema>;

const submitContractTool = {
  name: SUBMIT_CONTRACT,
  description: 'Submit the goal as a contract: restated, its success criteria (each checkable), deliverables, constraints and what is out of scope.',
  schema: SubmitContractSchema,
};

function perceiverPrompt(native: boolean, found: readonly NewCriterion[]): string {
  return [
    "You turn an operator's goal into a contract before anyone plans it. You do not plan or do the work.",
    'Restate the goal in one or two sentences. List success criteria: each one a thing that can be checked when the work is done ' +
      '(a file that must exist or change: give it as "file"; a command that must succeed: give it as "command"; a value the answer must state: give it as "value"; otherwise a property of the answer in words). ' +
      'Only criteria the goal asks for; nothing the goal does not ask. Then the deliverables, the constraints the goal sets, and what is out of scope.',
    found.length > 0 ? `Already read from the goal's words (keep them; add only what is missing):\n${found.map((criterion) => `- ${criterion.text}`).join('\n')}` : '',
    native ? `Call ${SUBMIT_CONTRACT} exactly once.` : 'Reply with one line and nothing else: Contract: {"goal", "success_criteria": [{"text", "file"?, "command"?, "value"?}], "deliverables", "constraints", "out_of_scope"}',
  ]
    .filter(Boolean)
    .join('\n\n');
}

/** The model's criteria joined to those the words gave: a file or command already named is not added twice. */
function joined(found: readonly NewCriterion[], submitted: SubmittedContract): NewCriterion[] {
  const files = new Set(found.flatMap((criterion) => (criterion.kind === 'file_written' ? [criterion.path] : [])));
  const commands = new Set(found.flatMap((criterion) => (criterion.kind === 'command_succeeds' ? [criterion.command] : [])));
  const added = submitted.success_criteria.flatMap((item): NewCriterion[] => {
    const path = item.file === undefined ? null : workspacePath(item.file);
    if (path !== null) {
      if (files.has(path)) return [];
      files.add(path);
      return [{ kind: 'file_written', path, text: item.text, source: 'model' }];
    }
    if (item.command) {
      if (commands.has(item.command)) return [];
      commands.add(item.command);
      return [{ kind: 'command_succeeds', command: item.command, text: item.text, source: 'model' }];
    }
    if (item.value) return [{ kind: 'answer_mentions', value: item.value, text: item.text, source: 'model' }];
    // A file outside the workspace is no file a tool can write: the critic judges it.
    return [{ kind: 'judged', text: item.text, source: 'model' }];
  });
  return [...found, ...added];
}

/**
 * The Perceiver: the goal as a contract before planning. Its words first (no model); with verification
 * `critic`, the model adds what words alone cannot state, through one structured answer. An unreadable
 * answer leaves the contract to the words: the run is not held up by its own bookkeeping.
 */
export async function perceiveGoal(context: RunContext): Promise<GoalContract> {
  const found = criteriaInWords(context.goal);
  const fromWords = contractOfWords(context.goal, found);
  if (context.options.verification !== 'critic') return fromWords;
  const perceiver = asRole(context, 'planner');
  const answer = await askStructured((chat) => callModel(perceiver, { purpose: 'contract', ...chat }, null), {
    tool: submitContractTool,
    noun: 'contract',
    label: 'Contract',
    mode: perceiver.mode,
    messages: [
      { role: 'system', content: withRolePrompt(perceiver, perceiverPrompt(perceiver.mode === 'native', found)) },
      { role: 'user', content: `Goal: ${context.goal}` },
    ],
    maxRepairs: 1,
    onDialect: (dialect) => noteDialect(perceiver, dialect),
  });
  if (!answer.ok) {
    context.log?.warn({ runId: context.runId, error: answer.error }, 'the model gave no readable contract; the goal is checked against its own words');
    return fromWords;
  }
  const submitted = answer.value;
  const criteria = numbered(joined(found, submitted));
  return {
    goal: submitted.goal,
    criteria,
    deliverables: [...new Set([...fromWords.deliverables, ...submitted.deliverables])].slice(0, 20),
    constraints: [...new Set([...fromWords.constraints, ...submitted.constraints])].slice(0, 20),
    outOfScope: submitted.out_of_scope,
  };
}

export function criterionLine(criterion: Criterion): string {
  if (criterion.kind === 'file_written') return `${criterion.id}: the file ${criterion.path} is written`;
  if (criterion.kind === 'command_succeeds') return `${criterion.id}: \`${criterion.command}\` runs and exits 0`;
  if (criterion.kind === 'answer_format') return `${criterion.id}: the final answer is ${criterion.format === 'number' ? 'one number' : 'JSON'}`;
  if (criterion.kind === 'answer_mentions') return `${criterion.id}: the final answer states ${criterion.value}`;
  return `${criterion.id}: ${criterion.text}`;
}

/** The contract as the planner's brief has it: the plan must cover every criterion. */
export function contractBrief(contract: GoalContract): string | null {
  if (contract.criteria.length === 0 && contract.constraints.length === 0) return null;
  const lines = ['Success criteria (the goal is done only when each holds; plan steps that make each one true):', ...contract.criteria.map((criterion) => `- ${criterionLine(criterion)}`)];
  if (contract.constraints.length > 0) lines.push('Constraints:', ...contract.constraints.map((constraint) => `- ${constraint}`));
  if (contract.outOfScope.length > 0) lines.push('Out of scope:', ...contract.outOfScope.map((item) => `- ${item}`));
  return lines.join('\n');
}

