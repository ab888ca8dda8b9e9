import { ArchonError } from '../../shared/errors';
import type { Criterion, CriterionOutcome, GoalContract } from '../../shared/schemas/goal-contract';
import { approveOutcome } from '../approval/checkpoints';
import type { FinalDraft, FinalReview } from '../run/hooks';
import { askCritic } from '../run/critic';
import type { RunContext } from '../run/run-context';
import { CONFIDENCE_AUTO, CONFIDENCE_REVIEW } from '../run/confidence';
import { checkAnswerFormat } from '../contract/answer-format';
import { contractOf } from '../contract/contract-state';
import { criterionLine } from '../contract/perceiver';
import { runEvidence, type RunEvidence } from '../contract/run-evidence';

/** What one look at the outcome found: each criterion, the gaps, and the critic's confidence (null: no critic judged). */
interface Judgement {
  criteria: CriterionOutcome[];
  gaps: string[];
  confidence: number | null;
  /** The critic's reason when it judged the goal not done. */
  criticFailure: string | null;
  /** Some of it could not be judged (no readable verdict, or a pass the critic was unsure of): a person decides. */
  unjudged: boolean;
}

const met = (id: string, evidence: string): CriterionOutcome => ({ id, met: true, evidence: [evidence], detail: null });
const unmet = (id: string, detail: string): CriterionOutcome => ({ id, met: false, evidence: [], detail });

function normalizedText(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ');
}

/** A criterion checked against the run's record and the answer; null for one only the critic can judge. */
function checkCriterion(criterion: Criterion, evidence: RunEvidence, answer: string): CriterionOutcome | null {
  switch (criterion.kind) {
    case 'file_written': {
      const write = evidence.write(criterion.path);
      return write.found ? met(criterion.id, write.evidence) : unmet(criterion.id, write.detail);
    }
    case 'command_succeeds': {
      const run = evidence.commandSuccess(criterion.command);
      return run.found ? met(criterion.id, run.evidence) : unmet(criterion.id, run.detail);
    }
    case 'answer_format': {
      const format = checkAnswerFormat(criterion.format, answer);
      return format.holds ? met(criterion.id, `the answer parses as ${criterion.format === 'number' ? 'one number' : 'JSON'}`) : unmet(criterion.id, format.detail);
    }
    case 'answer_mentions':
      return normalizedText(answer).includes(normalizedText(criterion.value)) ? met(criterion.id, `the answer states ${criterion.value}`) : unmet(criterion.id, `The answer does not state ${criterion.value}.`);
    case 'judged':
      return null;
  }
}

function deterministicOutcomes(contract: GoalContract, evidence: RunEvidence, answer: string): Map<string, CriterionOutcome> {
  const outcomes = new Map<string, CriterionOutcome>();
  for (const criterion of contract.criteria) {
    const outcome = checkCriterion(criterion, evidence, answer);
    if (outcome) outcomes.set(criterion.id, outcome);
  }
  return outcomes;
}

/** Criteria about the answer's own text that it does not meet: a rewrite of the answer can fix these. */
function answerShortfalls(contract: GoalContract, outcomes: ReadonlyMap<string, CriterionOutcome>): string[] {
  return contract.criteria.filter((criterion) => (criterion.kind === 'answer_format' || criterion.kind === 'answer_mentions') && outcomes.get(criterion.id)?.met === false).map((criterion) => outcomes.get(criterion.id)?.detail ?? criterion.text);
}

function stepResults(draft: FinalDraft): string[] {
  return draft.plan.steps.flatMap((step) => {
    const state = draft.states.get(step.id);
    return state?.status === 'completed' ? [`Step ${step.id} (${step.description}) result: ${state.result ?? ''}`] : [];
  });
}

/** The critic's one call on what words and records cannot settle: the judged criteria, and whether the answer does what the goal asks. */
interface CriticJudgement {
  confidence: number | null;
  failure: string | null;
  /** No readable verdict: the answer was not judged at all. */
  unjudged?: boolean;
}

async function judge(context: RunContext, contract: GoalContract, draft: FinalDraft, answer: string, outcomes: Map<string, CriterionOutcome>): Promise<CriticJudgement> {
  const judged = contract.criteria.filter((criterion) => criterion.kind === 'judged');
  const criteria = [...contract.criteria.map(criterionLine), 'The final answer does what the goal asks, and claims nothing the evidence does not show.'].join('\n');
  const recorded = [...outcomes.values()].flatMap((outcome) => outcome.evidence);
  const verdict = await askCritic(context, { task: contract.goal, criteria, subject: answer, evidence: [...recorded, ...stepResults(draft)], stepId: null, purpose: 'outcome' });
  if (!verdict.readable) {
    for (const criterion of judged) outcomes.set(criterion.id, { id: criterion.id, met: null, evidence: [], detail: verdict.reason });
    return { confidence: null, failure: null, unjudged: true };
  }
  const { verdict: said, reason, gap, confidence } = verdict.verdict;
  const sure = confidence ?? 1 - gap;
  const judgedAs = (id: string): CriterionOutcome => {
    if (said === 'fail') return unmet(id, reason);
    // A pass the critic is not sure of proves nothing: the criterion stays unjudged.
    return sure < CONFIDENCE_REVIEW ? { id, met: null, evidence: [], detail: `the critic passed it unsure (confidence ${sure.toFixed(2)}): ${reason}` } : { id, met: true, evidence: [`the critic: ${reason}`], detail: null };
  };
  for (const criterion of judged) outcomes.set(criterion.id, judgedAs(criterion.id));
  return { confidence: sure, failure: said === 'fail' || sure < CONFIDENCE_REVIEW ? reason : null };
}

/** The run's criteria, its unknown outcomes and (for a top-level run) the critic's judgement, for one answer. */
async function look(context: RunContext, contract: GoalContract, draft: FinalDraft, answer: string, evidence: RunEvidence): Promise<Judgement> {
  const outcomes = deterministicOutcomes(contract, evidence, answer);
  // A sub-agent's answer is its parent's step result, judged there: it spends no critic call of its own.
  const critic: CriticJudgement = context.options.parentRunId ? { confidence: null, failure: null } : await judge(context, contract, draft, answer, outcomes);
  const criteria = contract.criteria.map((criterion) => outcomes.get(criterion.id) ?? { id: criterion.id, met: null, evidence: [], detail: null });
  const gaps = [
    ...contract.criteria.flatMap((criterion) => (outcomes.get(criterion.id)?.met === false && criterion.kind !== 'judged' ? [`${criterion.text}: ${outcomes.get(criterion.id)?.detail ?? 'not met'}`] : [])),
    ...evidence.unknownOutcomes(),
    ...(critic.failure ? [`Judged not done: ${critic.failure}`] : []),
  ];
  return { criteria, gaps, confidence: critic.confidence, criticFailure: critic.failure, unjudged: critic.unjudged === true || criteria.some((outcome) => outcome.met === null) };
}

type Route = 'accept' | 'ask' | 'gaps';

/** Gaps go to the operator; so does an outcome not judged in full or judged below the band's top, except under permissive and in a sub-agent's run. */
function routeOf(context: RunContext, judgement: Judgement): Route {
  if (judgement.gaps.length > 0) return 'gaps';
  if (context.policy === 'permissive' || context.options.parentRunId) return 'accept';
  const { confidence } = judgement;
  return judgement.unjudged || (confidence !== null && confidence < CONFIDENCE_AUTO) ? 'ask' : 'accept';
}

/** The files and commands each criterion rests on, cited under the answer (not under an answer whose form is prescribed). */
function withEvidence(answer: string, contract: GoalContract, criteria: readonly CriterionOutcome[]): string {
  if (contract.criteria.some((criterion) => criterion.kind === 'answer_format')) return answer;
  const lines = contract.criteria.flatMap((criterion) => {
    if (criterion.kind !== 'file_written' && criterion.kind !== 'command_succeeds') return [];
    const outcome = criteria.find((item) => item.id === criterion.id);
    return outcome?.met ? [`- ${criterion.text}: ${outcome.evidence.join('; ')}`] : [];
  });
  return lines.length === 0 ? answer : `${answer}\n\nEvidence:\n${lines.join('\n')}`;
}

function unmetError(context: RunContext, gaps: readonly string[], why: string): ArchonError {
  // A sub-agent's unmet goal is its parent step's failure: the parent's recovery takes it from there.
  const next = context.options.parentRunId
    ? `Its parent run ${context.options.parentRunId} takes this as its step's failure.`
    : `Do what is missing and run the goal again, or accept these gaps: \`archon resume ${context.runId} --accept-gaps\` ends it completed with gaps.`;
  return new ArchonError('CRITERIA_UNMET', `The run did not meet its goal: ${gaps.join(' ')}${why ? ` ${why}` : ''} ${next}`);
}

/**
 * The outcome check (the Meta-Validator's fan-in), before the final answer is given: every success
 * criterion against the evidence of the whole run, a rewrite when the answer's own form falls short,
 * one critic call for what only it can judge (one more after a rewrite it asked for), and the
 * confidence band. Gaps end the run failed unless the operator accepts them (`completed_with_gaps`).
 */
export async function checkOutcome(context: RunContext, draft: FinalDraft): Promise<FinalReview> {
  const contract = contractOf(context);
  if (!contract) return { answer: draft.answer, gaps: [] };
  const evidence = runEvidence(context);
  let answer = draft.answer;
  const shortfalls = answerShortfalls(contract, deterministicOutcomes(contract, evidence, answer));
  if (shortfalls.length > 0) answer = await draft.rewrite(`The answer does not meet the goal's criteria: ${shortfalls.join(' ')}`);
  let judgement = await look(context, contract, draft, answer, evidence);
  if (judgement.criticFailure !== null && judgement.gaps.length === 1) {
    answer = await draft.rewrite(`An independent check found the answer falls short: ${judgement.criticFailure}`);
    judgement = await look(context, contract, draft, answer, evidence);
  }
  const route = routeOf(context, judgement);
  context.events.append(context.runId, 'outcome.checked', { criteria: judgement.criteria, verdict: judgement.gaps.length === 0 ? 'pass' : 'fail', confidence: judgement.confidence, gaps: judgement.gaps, route });
  const cited = withEvidence(answer, contract, judgement.criteria);
  if (route === 'accept') return { answer: cited, gaps: [] };
  if (context.options.parentRunId) throw unmetError(context, judgement.gaps, '');
  const decision = await approveOutcome(context, { gaps: judgement.gaps, criteria: judgement.criteria, contract, confidence: judgement.confidence });
  if (!decision.accepted) throw unmetError(context, judgement.gaps.length > 0 ? judgement.gaps : [judgement.confidence === null ? 'the outcome could not be judged.' : `the outcome check was not sure (confidence ${judgement.confidence.toFixed(2)}).`], `Not accepted: ${decision.feedback}`);
  return { answer: cited, gaps: judgement.gaps };
}
