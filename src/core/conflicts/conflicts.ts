import { asksAt } from '../../shared/policy';
import { conflictAnswerBody, settledConflictBody, stepAgentId, type ConflictBallot, type SettledConflict } from '../../shared/schemas/bus';
import type { RunEvent } from '../../shared/schemas/events';
import type { Plan, PlanStep } from '../../shared/schemas/plan';
import type { RunOptions } from '../../shared/schemas/run';
import { chooseConflictWinner } from '../approval/checkpoints';
import { handOff } from '../bus/hand-off';
import { askCritic } from '../run/critic';
import type { RoleRegistry } from '../roles/role-registry';
import type { RunCapability, RunContext } from '../run/run-context';
import type { StepState } from '../run/plan-view';

/** The weights of a conflict vote, and the score below which the operator decides. */
export const VOTE_WEIGHTS = { domain: 0.4, confidence: 0.3, history: 0.3 } as const satisfies VoteFactors;
export const VOTE_THRESHOLD = 0.6;
/** A role with no verdicts yet counts as even odds. */
const NO_HISTORY = 0.5;
/** How many of a role's latest verdicts make its history. */
const HISTORY_WINDOW = 20;

export type VoteFactors = ConflictBallot['factors'];
/** `escalate`: the winner scored under VOTE_THRESHOLD. */
export type VoteOutcome = SettledConflict['vote'];

/** The weighted vote: the highest score wins (the earlier step on a tie). */
export function weighVote(candidates: readonly Omit<ConflictBallot, 'score'>[]): VoteOutcome {
  const ballots = candidates.map((candidate) => ({ ...candidate, score: Object.entries(VOTE_WEIGHTS).reduce((sum, [name, weight]) => sum + weight * candidate.factors[name as keyof VoteFactors], 0) }));
  const winner = ballots.reduce((best, ballot) => (ballot.score > best.score ? ballot : best));
  return { ballots, winner, escalate: winner.score < VOTE_THRESHOLD };
}

/**
 * The question a step answers: its expected output, normalized. Completed steps with the same one,
 * neither depending on the other, are rival answers to the same question.
 */
export function questionOf(step: PlanStep): string | null {
  const question = step.expected_output?.trim().toLowerCase().replace(/\s+/g, ' ');
  return question ? question : null;
}

export function rivalGroups(plan: Plan, states: ReadonlyMap<string, StepState>): PlanStep[][] {
  const groups = new Map<string, PlanStep[]>();
  for (const step of plan.steps) {
    const question = questionOf(step);
    if (question === null || states.get(step.id)?.status !== 'completed') continue;
    const group = groups.get(question) ?? [];
    if (group.every((other) => !other.dependencies.includes(step.id) && !step.dependencies.includes(other.id))) groups.set(question, [...group, step]);
  }
  return [...groups.values()].filter((group) => group.length > 1);
}

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]{4,}/gu) ?? []);
}

/** Role/domain match: the overlap coefficient of the question's words and the role's name and description (0 without a described role). */
export function domainMatch(step: PlanStep, roles: RunOptions['roles']): number {
  const role = step.role ? roles?.[step.role] : undefined;
  if (!role) return 0;
  const question = words(`${step.description} ${step.expected_output ?? ''}`);
  const expertise = words(`${step.role ?? ''} ${role.description}`);
  const shared = [...question].filter((word) => expertise.has(word)).length;
  return shared === 0 ? 0 : shared / Math.min(question.size, expertise.size);
}

/** A step's vote: its role's history counts the verdicts of the steps that ran as the same role (a role-less step as the run's step default). */
export function factorsOf(step: PlanStep, plan: Plan, roles: { registry: RoleRegistry; configured: RunOptions['roles'] }, events: readonly RunEvent[]): VoteFactors {
  const verdicts = events.flatMap((event) => (event.type === 'validation.completed' && event.stepId !== null ? [event] : []));
  const roleOf = (id: string) => {
    const ran = plan.steps.find((candidate) => candidate.id === id);
    return ran ? roles.registry.roleOf(ran) : null;
  };
  const history = verdicts.filter((event) => roleOf(event.stepId ?? '') === roles.registry.roleOf(step)).slice(-HISTORY_WINDOW);
  return {
    domain: domainMatch(step, roles.configured),
    confidence: verdicts.findLast((event) => event.stepId === step.id)?.confidence ?? 0,
    history: history.length === 0 ? NO_HISTORY : history.filter((event) => event.verdict === 'pass').length / history.length,
  };
}

/** The critic judges whether rival results agree: its `fail` is a disagreement. */
async function disagreement(context: RunContext, group: readonly PlanStep[], states: ReadonlyMap<string, StepState>): Promise<string | null> {
  const answer = await askCritic(context, {
    task: `${group.length} agents answered the same question. Judge whether their results agree: pass when they agree, fail when they contradict each other.`,
    criteria: group[0]?.expected_output ?? null,
    subject: group.map((step) => `Step ${step.id} (${stepAgentId(step)}): ${states.get(step.id)?.result ?? ''}`).join('\n\n'),
    evidence: [],
    stepId: null,
  });
  return answer.readable && answer.verdict.verdict === 'fail' ? answer.verdict.reason : null;
}

/**
 * Conflicts between specialists, with `critic` verification: rival results the critic says disagree go to a weighted
 * vote; a winner under VOTE_THRESHOLD goes to the operator where the policy asks critical decisions. Every step keeps
 * its stored result; the losers' results reach the final answer marked as superseded.
 */
async function settleConflicts(context: RunContext, plan: Plan, states: ReadonlyMap<string, StepState>): Promise<ReadonlyMap<string, StepState>> {
  if (context.options.verification !== 'critic') return states;
  const settled = new Map(states);
  for (const group of rivalGroups(plan, states)) {
    const reason = await disagreement(context, group, states);
    if (reason === null) continue;
    context.events.flush();
    const events = context.runs.events(context.runId, Number.MAX_SAFE_INTEGER);
    const vote = weighVote(group.map((step) => ({ stepId: step.id, agent: stepAgentId(step), factors: factorsOf(step, plan, { registry: context.roles.registry, configured: context.options.roles }, events) })));
    const conflict: SettledConflict = { question: questionOf(group[0] as PlanStep) ?? '', reason, vote };
    context.bus.publish(context.runId, { from: 'critic', to: 'coordinator', kind: 'critique', body: `Steps ${group.map((step) => step.id).join(', ')} disagree on "${conflict.question}": ${reason}` });
    const winner = vote.escalate && asksAt(context.policy, 'critical_decision')
      ? await handOff(context, { from: 'coordinator', to: 'operator', kind: 'escalation', body: settledConflictBody(conflict) }, () => chooseConflictWinner(context, conflict), conflictAnswerBody)
      : vote.winner.stepId;
    if (winner === vote.winner.stepId) context.bus.publish(context.runId, { from: 'coordinator', to: 'broadcast', topic: 'broadcast', kind: 'decision', body: settledConflictBody({ ...conflict, winner }) });
    for (const step of group) {
      if (step.id !== winner) settled.set(step.id, { status: 'completed', result: `(superseded: step ${winner}'s answer to the same question was chosen over this one)` });
    }
  }
  return settled;
}

/** Rival results settled before the final answer is written from them. */
export const conflicts: RunCapability = {
  name: 'conflicts',
  hooks: { beforeFinalAnswer: settleConflicts },
};
