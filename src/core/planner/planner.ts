import { ArchonError } from '../../shared/errors';
import { PlanSchema, type Plan, type PlanStep } from '../../shared/schemas/plan';
import type { ChatMessage, ModelMode } from '../model/chat';
import type { DialectName } from '../model/dialects/dialect-names';
import type { RoleRegistry } from '../roles/role-registry';
import { askStructured, type Checked, type StructuredChat } from '../run/structured-answer';
import type { ToolRegistry } from '../tools/tool-registry';
import { MAX_SUBAGENT_DEPTH } from '../../shared/schemas/roles';
import { validatePlan } from './validate-plan';
import { carriesFence, spotlightRule } from '../provenance/spotlight';

export const SUBMIT_PLAN = 'submit_plan';
export const MAX_PLAN_REPAIRS = 2;
/** A completed step's result is given to the re-planner up to this many characters. */
export const REPLAN_RESULT_CHARS = 2000;

export interface PlannerDependencies {
  mode: ModelMode;
  tools: ToolRegistry;
  /** The roles a step may be given (the `planner` role's prompt addition included); absent: the built-in ones. */
  roles?: RoleRegistry;
  /** The most steps the plan may have (planStepCap). */
  maxSteps: number;
  /** One planning request through the run's gate (callModel bound to the purpose). */
  callModel: StructuredChat;
  /** Told when a text-mode plan came as a submit_plan call in the model's own dialect. */
  onDialect?(dialect: DialectName): void;
  /** The planning run's sub-agent depth (0: a top-level run); at MAX_SUBAGENT_DEPTH no sub-agent steps are offered or accepted. */
  depth?: number;
}

const submitPlanTool = {
  name: SUBMIT_PLAN,
  description: 'Submit the plan: the steps that reach the goal and the dependencies between them.',
  schema: PlanSchema,
};

const SUBAGENT_STEPS =
  'A step may instead be a sub-agent: {"id", "kind": "subagent", "goal": "…", "dependencies", "role"?}. It runs as a child run that plans and carries out its own goal, and its answer is the step\'s result. Use one only for a self-contained part of the goal that needs several steps of its own; never give it the whole goal.';

function plannerPrompt(mode: ModelMode, tools: ToolRegistry, roles?: RoleRegistry, depth = 0): string {
  const toolList = tools.specs().map((tool) => `- ${tool.name}: ${tool.description}`).join('\n') || '- (none)';
  const addition = roles?.get('planner')?.systemPrompt;
  return [
    "You plan how to reach the operator's goal as a graph of steps.",
    'Each step has an id, a self-contained description of what to do, the ids of the steps whose results it needs (dependencies), and optionally expected_output, risk (low|medium|high|critical), and tool plus args when a single tool call does the whole step.',
    'Steps that do not need each other have no dependencies between them, so they run in parallel. Keep the plan as small as the goal allows.',
    ...(depth < MAX_SUBAGENT_DEPTH ? [SUBAGENT_STEPS] : []),
    `Tools the steps may use:\n${toolList}`,
    ...(roles ? [`Roles a step may be given (its "role"; without one it runs as ${roles.stepDefault}), each with only its tools:\n${roles.describeForPlanner()}`] : []),
    mode === 'native'
      ? `Call ${SUBMIT_PLAN} exactly once with {"goal": …, "steps": [{"id", "description", "dependencies", …}]}.`
      : 'Reply with one JSON object and nothing else: {"goal": "…", "steps": [{"id": "…", "description": "…", "dependencies": []}]}.',
    ...(addition ? [addition] : []),
  ].join('\n\n');
}

/** A sub-agent step may come without a description: its goal is one. */
function withSubagentDescriptions(value: unknown): object {
  if (typeof value !== 'object' || value === null) return {};
  const { steps } = value as { steps?: unknown };
  if (!Array.isArray(steps)) return value;
  const filled = steps.map((step: unknown) => {
    if (typeof step !== 'object' || step === null) return step;
    const { kind, goal, description } = step as { kind?: unknown; goal?: unknown; description?: unknown };
    return kind === 'subagent' && description === undefined && typeof goal === 'string' ? { ...step, description: goal } : step;
  });
  return { ...value, steps: filled };
}

/**
 * Asks for a plan through `submit_plan` until `check` accepts one: the errors of a refused plan go
 * back to the model, at most MAX_PLAN_REPAIRS times. The plan's goal is always the run's.
 */
async function submitPlan<T>(goal: string, dependencies: PlannerDependencies, messages: ChatMessage[], check: (plan: Plan) => Checked<T>): Promise<T> {
  const answer = await askStructured(dependencies.callModel, {
    tool: submitPlanTool,
    noun: 'plan',
    mode: dependencies.mode,
    messages,
    maxRepairs: MAX_PLAN_REPAIRS,
    prepare: (json) => ({ ...withSubagentDescriptions(json), goal }),
    check,
    onDialect: dependencies.onDialect,
  });
  if (answer.ok) return answer.value;
  throw new ArchonError('PLAN_INVALID', `The model did not produce a valid plan in ${answer.attempts} attempts. Last problems: ${answer.error}`);
}

/** What the plan request carries before its goal (some of it fenced as data), and the run's fence nonce. */
export interface PlanBackground {
  parts: readonly string[];
  nonce: string;
}

/** The planner's instructions, with what the fence means when the request carries fenced text. */
function planningPrompt(dependencies: PlannerDependencies, background: PlanBackground | null): string {
  const prompt = plannerPrompt(dependencies.mode, dependencies.tools, dependencies.roles, dependencies.depth);
  return background?.parts.some((part) => carriesFence(part, background.nonce)) ? `${prompt}\n\n${spotlightRule(background.nonce)}` : prompt;
}

/**
 * Goal → validated plan. The plan must parse, match the schema and be a valid DAG; otherwise the
 * errors go back to the model, at most MAX_PLAN_REPAIRS times. `feedback` carries an operator's
 * words from a rejected plan into the request; `background`, what goes before the goal: the
 * contract's criteria, and what comes from earlier runs (a follow-up's earlier run, recalled memory) fenced as data.
 */
export async function planGoal(goal: string, dependencies: PlannerDependencies, operatorFeedback: string[] = [], background: PlanBackground | null = null): Promise<Plan> {
  const messages: ChatMessage[] = [
    { role: 'system', content: planningPrompt(dependencies, background) },
    { role: 'user', content: [...(background?.parts ?? []), `Goal: ${goal}`].join('\n\n') },
    ...operatorFeedback.map((text): ChatMessage => ({ role: 'user', content: `The operator rejected the previous plan and said: ${text}` })),
  ];
  return submitPlan(goal, dependencies, messages, (plan) => {
    const errors = validatePlan(plan, dependencies.tools, { maxSteps: dependencies.maxSteps, roles: dependencies.roles, depth: dependencies.depth });
    return errors.length === 0 ? { ok: true, value: plan } : { ok: false, errors };
  });
}

/** What a scoped re-plan is asked to replace, and why. */
export interface ReplanScope {
  plan: Plan;
  failed: PlanStep;
  /** The failure reason, verbatim, fenced when the step saw untrusted text. */
  reason: string;
  /** The failed step and its not-yet-started dependants: what the replacement stands in for. */
  replaced: readonly string[];
  /** Each completed step's result as the re-planner may see it: capped at REPLAN_RESULT_CHARS, fenced when built on untrusted text. */
  completed: ReadonlyMap<string, string>;
  /** The run's fence nonce: the re-planner is told what its fences mean. */
  nonce: string;
  /** Set when plain re-plans stopped closing the gap: the decompositions that failed, which the new one must not repeat. */
  failedDecompositions?: readonly string[];
  operatorFeedback?: readonly string[];
}

function describeSteps(steps: readonly PlanStep[]): string {
  return steps.map((step) => `- ${step.id}: ${step.description}${step.dependencies.length ? ` (after ${step.dependencies.join(', ')})` : ''}`).join('\n');
}

function replanBrief(scope: ReplanScope): string {
  const replaced = scope.plan.steps.filter((step) => scope.replaced.includes(step.id));
  const kept = scope.plan.steps.filter((step) => !scope.replaced.includes(step.id));
  const lines = [
    `Goal: ${scope.plan.goal}`,
    `Step ${scope.failed.id} failed: ${scope.failed.description}`,
    `Failure reason: ${scope.reason}`,
    `Steps to replace (the failed step and the steps after it that have not started):\n${describeSteps(replaced)}`,
    `Steps that stay as they are (completed or running; a new step may depend on them by id):\n${describeSteps(kept) || '- (none)'}`,
  ];
  const results = [...scope.completed].map(([id, result]) => `- ${id}: ${result}`);
  if (results.length > 0) lines.push(`Results of the completed steps:\n${results.join('\n')}`);
  if (scope.failedDecompositions?.length) {
    lines.push(`These decompositions were tried and did not bring the goal closer; change strategy (different steps, tools or approach), do not repeat them:\n${scope.failedDecompositions.map((text) => `- ${text}`).join('\n')}`);
  }
  for (const text of scope.operatorFeedback ?? []) lines.push(`The operator rejected the previous revision and said: ${text}`);
  lines.push('Submit only the replacement steps, with new ids. Do not resubmit the steps that stay.');
  return lines.join('\n\n');
}

/** A step id not yet used by the run: the model's own id when free, else the id with the revision. */
function freshId(id: string, taken: ReadonlySet<string>, revision: number): string {
  let candidate = taken.has(id) ? `${id}.r${revision}` : id;
  for (let suffix = 2; taken.has(candidate); suffix++) candidate = `${id}.r${revision}-${suffix}`;
  return candidate;
}

/**
 * The replacement steps merged into the plan: replaced steps leave, new steps join under ids the run
 * has not used (`taken`: every id ever in the run), their dependencies on each other renamed with them.
 */
export function mergeReplacement(plan: Plan, replaced: readonly string[], replacement: readonly PlanStep[], taken: ReadonlySet<string>, revision: number): { plan: Plan; added: PlanStep[] } {
  const used = new Set(taken);
  const renamed = new Map<string, string>();
  for (const step of replacement) {
    const id = freshId(step.id, used, revision);
    used.add(id);
    renamed.set(step.id, id);
  }
  const added = replacement.map((step) => ({ ...step, id: renamed.get(step.id) as string, dependencies: step.dependencies.map((dependency) => renamed.get(dependency) ?? dependency) }));
  return { plan: { goal: plan.goal, steps: [...plan.steps.filter((step) => !replaced.includes(step.id)), ...added] }, added };
}

/** The errors of a revised plan: a valid DAG within the size limit, whose new steps lean on no replaced step. */
export function revisionErrors(revised: Plan, added: readonly PlanStep[], replaced: readonly string[], tools: ToolRegistry, { maxSteps, roles, depth }: { maxSteps?: number; roles?: RoleRegistry; depth?: number } = {}): string[] {
  const leaning = added.flatMap((step) => step.dependencies.filter((dependency) => replaced.includes(dependency)).map((dependency) => `Step "${step.id}" depends on "${dependency}", which is being replaced; depend on a step that stays or on a new one.`));
  return [...leaning, ...validatePlan(revised, tools, { maxSteps, roles, depth })];
}

/**
 * Scoped re-plan: the model replaces the failed step and its not-yet-started dependants, seeing the
 * failure reason verbatim (fenced when the step saw untrusted text); the steps that stay are untouched. Returns the revised plan and the steps added.
 */
export async function replanSubtree(scope: ReplanScope, dependencies: PlannerDependencies & { takenIds: ReadonlySet<string>; revision: number }): Promise<{ plan: Plan; added: PlanStep[] }> {
  const brief = replanBrief(scope);
  const task = 'A step of the running plan failed. Replace it, and the steps after it that have not started, with steps that reach the same results another way.';
  const rule = carriesFence(brief, scope.nonce) ? `\n\n${spotlightRule(scope.nonce)}` : '';
  const messages: ChatMessage[] = [
    { role: 'system', content: `${plannerPrompt(dependencies.mode, dependencies.tools, dependencies.roles, dependencies.depth)}\n\n${task}${rule}` },
    { role: 'user', content: brief },
  ];
  return submitPlan(scope.plan.goal, dependencies, messages, (replacement) => {
    const merged = mergeReplacement(scope.plan, scope.replaced, replacement.steps, dependencies.takenIds, dependencies.revision);
    const errors = revisionErrors(merged.plan, merged.added, scope.replaced, dependencies.tools, { maxSteps: dependencies.maxSteps, roles: dependencies.roles, depth: dependencies.depth });
    return errors.length === 0 ? { ok: true, value: merged } : { ok: false, errors };
  });
}
