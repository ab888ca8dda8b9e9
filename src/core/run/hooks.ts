import type { Plan, PlanStep } from '../../shared/schemas/plan';
import type { RunStatus } from '../../shared/schemas/run';
import type { ChatResponse } from '../model/chat';
import type { PlanView, Recovery, StepOutcome, StepState } from './plan-view';
import type { StepConversation } from './step-conversation';

/** A step's answer offered for review, with the conversation a repair goes on in. */
export interface ReviewedAnswer {
  result: string;
  conversation: StepConversation;
  /** `planned_call`: the plan's own call gave the result, so the model never saw it. */
  origin: 'model' | 'planned_call';
}

export interface StepFailure {
  reason: string;
  view: PlanView;
  /** The failure was stored by an earlier process, which ended before its recovery did. */
  resumed: boolean;
}

/** The final answer as written, before it is given: what it was written from, and a way to write it again with feedback. */
export interface FinalDraft {
  answer: string;
  plan: Plan;
  states: ReadonlyMap<string, StepState>;
  rewrite(feedback: string): Promise<string>;
}

/** The answer to give, and the success criteria the operator accepted as unmet (the run ends `completed_with_gaps`). */
export interface FinalReview {
  answer: string;
  gaps: readonly string[];
}

export interface RunEnding {
  status: RunStatus;
  answer?: string;
  error?: string;
}

/**
 * The named points of a run where a capability takes part, each optional. A hook that decides
 * (`runStep`, `reviewResult`, `stepFailed`) answers `undefined` to leave the decision to the next.
 */
export interface RunHooks<Context> {
  /** A section for the planner's brief, or null. */
  beforePlan?(context: Context): Promise<string | null>;
  planApproved?(context: Context, plan: Plan): void;
  /** A section for a fresh step's brief, or null. */
  beforeStep?(context: Context, step: PlanStep): Promise<string | null>;
  /** Runs a step the ReAct loop does not (a sub-agent's). */
  runStep?(context: Context, step: PlanStep, dependencyResults: ReadonlyMap<string, string>): Promise<StepOutcome> | undefined;
  afterModelTurn?(context: Context, step: PlanStep, response: ChatResponse): void;
  /** The step's outcome, or null to send it back to work (the reason already in its conversation). */
  reviewResult?(context: Context, step: PlanStep, answer: ReviewedAnswer): Promise<StepOutcome | null> | undefined;
  stepRepaired?(context: Context, step: PlanStep): Promise<void>;
  stepFailed?(context: Context, step: PlanStep, failure: StepFailure): Promise<Recovery> | undefined;
  /** The results the final answer is written from. */
  beforeFinalAnswer?(context: Context, plan: Plan, states: ReadonlyMap<string, StepState>): Promise<ReadonlyMap<string, StepState>>;
  /** The written answer checked before it is given; throws to end the run without it. */
  reviewFinalAnswer?(context: Context, draft: FinalDraft): Promise<FinalReview> | undefined;
  runEnded?(context: Context, ending: RunEnding): void;
}

export interface Capability<Context> {
  name: string;
  hooks: RunHooks<Context>;
}

/** The hooks of a run's capabilities as one: each point always answers. */
export interface Hooks<Context> {
  beforePlan(context: Context): Promise<string | null>;
  planApproved(context: Context, plan: Plan): void;
  beforeStep(context: Context, step: PlanStep): Promise<string | null>;
  /** Undefined: the step is the ReAct loop's. */
  runStep(context: Context, step: PlanStep, dependencyResults: ReadonlyMap<string, string>): Promise<StepOutcome> | undefined;
  afterModelTurn(context: Context, step: PlanStep, response: ChatResponse): void;
  reviewResult(context: Context, step: PlanStep, answer: ReviewedAnswer): Promise<StepOutcome | null>;
  stepRepaired(context: Context, step: PlanStep): Promise<void>;
  stepFailed(context: Context, step: PlanStep, failure: StepFailure): Promise<Recovery>;
  beforeFinalAnswer(context: Context, plan: Plan, states: ReadonlyMap<string, StepState>): Promise<ReadonlyMap<string, StepState>>;
  reviewFinalAnswer(context: Context, draft: FinalDraft): Promise<FinalReview>;
  runEnded(context: Context, ending: RunEnding): void;
}

/** Brief sections from every capability, in list order. */
async function sections(asks: readonly (() => Promise<string | null>)[]): Promise<string | null> {
  const found: string[] = [];
  for (const ask of asks) {
    const section = await ask();
    if (section !== null) found.push(section);
  }
  return found.length > 0 ? found.join('\n\n') : null;
}

/** The first capability that answers, in list order. */
function firstAnswer<Answer>(asks: readonly (() => Answer | undefined)[]): Answer | undefined {
  for (const ask of asks) {
    const answer = ask();
    if (answer !== undefined) return answer;
  }
  return undefined;
}

/**
 * Several capabilities' hooks combined: every one is called in list order; for a hook that decides,
 * the first that answers. Unanswered, a result is accepted as it is and a failure is not recovered.
 */
export function combineHooks<Context>(capabilities: readonly Capability<Context>[]): Hooks<Context> {
  const all = capabilities.map((capability) => capability.hooks);
  return {
    beforePlan: (context) => sections(all.map((hooks) => () => hooks.beforePlan?.(context) ?? Promise.resolve(null))),
    planApproved: (context, plan) => all.forEach((hooks) => hooks.planApproved?.(context, plan)),
    beforeStep: (context, step) => sections(all.map((hooks) => () => hooks.beforeStep?.(context, step) ?? Promise.resolve(null))),
    runStep: (context, step, results) => firstAnswer(all.map((hooks) => () => hooks.runStep?.(context, step, results))),
    afterModelTurn: (context, step, response) => all.forEach((hooks) => hooks.afterModelTurn?.(context, step, response)),
    reviewResult: (context, step, answer) => firstAnswer(all.map((hooks) => () => hooks.reviewResult?.(context, step, answer))) ?? Promise.resolve({ status: 'completed', result: answer.result }),
    stepRepaired: async (context, step) => {
      for (const hooks of all) await hooks.stepRepaired?.(context, step);
    },
    stepFailed: (context, step, failure) => firstAnswer(all.map((hooks) => () => hooks.stepFailed?.(context, step, failure))) ?? Promise.resolve(null),
    beforeFinalAnswer: async (context, plan, states) => {
      let results = states;
      for (const hooks of all) if (hooks.beforeFinalAnswer) results = await hooks.beforeFinalAnswer(context, plan, results);
      return results;
    },
    reviewFinalAnswer: (context, draft) => firstAnswer(all.map((hooks) => () => hooks.reviewFinalAnswer?.(context, draft))) ?? Promise.resolve({ answer: draft.answer, gaps: [] }),
    runEnded: (context, ending) => all.forEach((hooks) => hooks.runEnded?.(context, ending)),
  };
}

/** A capability's own state for one run, made on first use; every view of the run's context shares it. */
export function stateOf<State>(context: { capabilityStates: Map<string, unknown> }, name: string, create: () => State): State {
  if (!context.capabilityStates.has(name)) context.capabilityStates.set(name, create());
  return context.capabilityStates.get(name) as State;
}
