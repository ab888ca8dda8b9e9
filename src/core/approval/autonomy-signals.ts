import type { ApprovalKind, ApprovalStatus } from '../../shared/schemas/approval';
import type { RunEvent } from '../../shared/schemas/events';
import type { Plan } from '../../shared/schemas/plan';
import type { RecordedDecision } from '../store/run-store';
import { riskScore, type AutonomySignals } from './policy';

/** How many of the operator's latest answers trust is read from, and how few say nothing yet. */
export const TRUST_WINDOW = 50;
export const TRUST_MIN_DECISIONS = 3;

/** How much an answer withholds trust: a correction counts half a refusal. */
const DISTRUST: Partial<Record<ApprovalStatus, number>> = { approved: 0, edited: 0.5, rejected: 1, locked: 1 };

/** Checkpoints that judge an action the agent proposes (not a budget, a resume or an escalation). */
const ACTION_KINDS = new Set<ApprovalKind>(['plan', 'model_call', 'step_result', 'critical_decision', 'final_answer']);

/** Whether an answer was about the kind of action this plan will take: its tools (any tool when it names none), plans, results, answers. */
function aboutThisPlan(plan: Plan): (decision: RecordedDecision) => boolean {
  const tools = new Set(plan.steps.flatMap((step) => (step.tool ? [step.tool] : [])));
  return (decision) => (decision.kind === 'tool_call' ? tools.size === 0 || (decision.tool !== null && tools.has(decision.tool)) : ACTION_KINDS.has(decision.kind));
}

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** Trust as its absence: the share of the operator's recent answers on such actions that refused (1) or corrected (0.5) them. */
export function measureTrust(plan: Plan, decisions: readonly RecordedDecision[]): number | null {
  const relevant = decisions.filter(aboutThisPlan(plan)).flatMap((decision) => DISTRUST[decision.status] ?? []);
  return relevant.length < TRUST_MIN_DECISIONS ? null : mean(relevant);
}

/** The validators' confidences in the run, oldest first. */
function confidences(events: readonly RunEvent[]): number[] {
  return events.flatMap((event) => (event.type === 'validation.completed' && event.confidence !== null ? [event.confidence] : []));
}

/** The mean of the validators' confidences, to three places; null when none was reported. */
export function meanOf(measured: readonly number[]): number | null {
  return measured.length === 0 ? null : Math.round(mean(measured) * 1000) / 1000;
}

/** The validators' mean confidence over the run's verdicts that report one; null when none does. */
function meanConfidence(events: readonly RunEvent[]): number | null {
  return meanOf(confidences(events));
}

/** Uncertainty: one less the validators' mean confidence over the run's verdicts that report one. */
export function measureUncertainty(events: readonly RunEvent[]): number | null {
  const confidence = meanConfidence(events);
  return confidence === null ? null : 1 - confidence;
}

/** Seed 000's signals for a run about to execute `plan`; knowledge stays unmeasured: long-term memory recalls, but does not score what the run knows. */
export function measureAutonomySignals(plan: Plan, decisions: readonly RecordedDecision[], events: readonly RunEvent[]): AutonomySignals {
  return {
    complexity: Math.min(1, plan.steps.length / 20),
    risk: riskScore(plan.steps.map((step) => step.risk)),
    trust: measureTrust(plan, decisions),
    uncertainty: measureUncertainty(events),
    knowledge: null,
  };
}
