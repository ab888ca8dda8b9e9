import { ArchonError } from '../../shared/errors';
import type { PlanStep } from '../../shared/schemas/plan';
import { MAX_SUBAGENT_DEPTH } from '../../shared/schemas/roles';
import type { RunSummary } from '../../shared/schemas/run';
import { approveSubagentSpawn } from '../approval/checkpoints';
import type { ChildRunOutcome, RunCapability, RunContext } from '../run/run-context';
import { StepConversation } from '../run/step-conversation';
import type { StepOutcome } from '../run/plan-view';
import { capObservation } from '../model/observation';

/** Goals compared as a person reads them: case, spacing and end punctuation aside. */
function normalisedGoal(goal: string): string {
  return goal.toLowerCase().replace(/\s+/g, ' ').replace(/[.!?\s]+$/, '').trim();
}

/** The goals of this run and every run above it, nearest first (bounded by the depth limit). */
function ancestorGoals(context: RunContext): string[] {
  const goals = [context.goal];
  let parentId = context.options.parentRunId;
  for (let hops = 0; parentId && hops < MAX_SUBAGENT_DEPTH; hops++) {
    const parent = context.runs.getRun(parentId);
    if (!parent) break;
    goals.push(parent.summary.goal);
    parentId = parent.options.parentRunId;
  }
  return goals;
}

/** Why a sub-agent may not start at all, or null. */
function refusal(context: RunContext, goal: string, depth: number): string | null {
  if (depth > MAX_SUBAGENT_DEPTH) return `subagent_refused: a sub-agent here would be at depth ${depth}; at most ${MAX_SUBAGENT_DEPTH} are allowed. Do the work in ordinary steps.`;
  const revisited = ancestorGoals(context).find((ancestor) => normalisedGoal(ancestor) === normalisedGoal(goal));
  if (revisited !== undefined) return `subagent_refused: the sub-agent's goal "${goal}" is the goal of this run or a run above it; a sub-agent must take a smaller part of it.`;
  return null;
}

/** The child's end, as the parent's step sees it: a stop, an exhausted budget or a pause ends the parent too. */
function outcomeOf(context: RunContext, childRunId: string, child: ChildRunOutcome): { answer: string } | { failed: string } {
  context.signal.throwIfAborted();
  if (child.status === 'completed') return { answer: child.answer ?? '' };
  if (child.status === 'budget_exhausted') throw new ArchonError('BUDGET_EXCEEDED', `Budget exhausted in sub-agent run ${childRunId}: ${child.error ?? 'its budget ran out'}`);
  if (child.status === 'paused') throw new ArchonError('PAUSED', `Sub-agent run ${childRunId} paused: ${child.error ?? ''} \`archon resume ${context.runId}\` continues both.`);
  return { failed: childFailure(childRunId, child) };
}

function childFailure(childRunId: string, child: Pick<ChildRunOutcome, 'status' | 'error'>): string {
  return `subagent_failed: sub-agent run ${childRunId} ended ${child.status}: ${child.error ?? 'no reason was recorded'}`;
}

/**
 * Whether the operator has asked, since this child started, to run its step again (resuming the run
 * after it failed). Otherwise a child that ended failed ended its own recovery: the step takes its
 * failure as it is (this process died before it could), and the child's steps are not run again.
 */
function rerunSince(context: RunContext, stepId: string, childRunId: string): boolean {
  const events = context.runs.events(context.runId, Number.MAX_SAFE_INTEGER);
  const started = events.findLastIndex((event) => event.type === 'subagent.started' && event.childRunId === childRunId);
  return events.slice(started + 1).some((event) => event.type === 'run.resumed' && (event.rerunSteps ?? []).includes(stepId));
}

/** The hand-off to the child on the bus (`subagent:<childRunId>`); a resumed parent reuses the task it left open. */
function handOff(context: RunContext, childRunId: string, goal: string): string {
  return context.bus.request(context.runId, { from: 'coordinator', to: `subagent:${childRunId}`, kind: 'task', body: goal }).id;
}

/** The step's opening, as the validator and the record of the step read it. */
function subagentBrief(context: RunContext, step: PlanStep, goal: string, dependencyResults: ReadonlyMap<string, string>): string {
  const lines = [`Goal: ${context.goal}`, `Step ${step.id}: a sub-agent reaches this goal with its own plan: ${goal}`];
  for (const [id, result] of dependencyResults) lines.push(`- ${id}: ${capObservation(result, 4000)}`);
  return lines.join('\n');
}

/** Asks (where the policy does) and starts a new child, or finds the one a crashed run already started. */
async function childFor(context: RunContext, step: PlanStep, goal: string, depth: number, existing: RunSummary | null): Promise<{ runId: string; resume: boolean } | { refused: string }> {
  if (existing && existing.status !== 'rejected') return { runId: existing.id, resume: true };
  const refused = await approveSubagentSpawn(context, { stepId: step.id, goal, role: step.role ?? null, depth, budget: context.budget.remaining() });
  return refused ? { refused } : { runId: context.newId(), resume: false };
}

/**
 * A plan step of kind `subagent`: a child run with its own plan and DAG for the step's goal, its
 * budget carved from this run's (whose caps still hold for both), at most MAX_SUBAGENT_DEPTH deep.
 * A resumed parent continues the child its step already started, never a second one (a child another
 * process drives is waited for, never taken for a failure). The child's
 * answer is reviewed like any step's result and becomes this step's result.
 */
async function runSubagentStep(context: RunContext, step: PlanStep, dependencyResults: ReadonlyMap<string, string>): Promise<StepOutcome> {
  const goal = step.goal ?? step.description;
  const depth = (context.options.depth ?? 0) + 1;
  const refused = refusal(context, goal, depth);
  if (refused) return { status: 'failed', reason: refused };
  const existing = context.runs.childRun(context.runId, step.id);
  if (existing?.status === 'completed') return review(context, step, goal, dependencyResults, existing.answer ?? '');
  if (existing?.status === 'failed' && !rerunSince(context, step.id, existing.id)) return { status: 'failed', reason: childFailure(existing.id, existing) };
  const child = await childFor(context, step, goal, depth, existing);
  if ('refused' in child) return { status: 'failed', reason: child.refused };
  const release = await context.subagents.acquireSlot(context.signal);
  let ended: ChildRunOutcome;
  let correlationId: string | null = null;
  try {
    ended = await context.subagents.run({
      runId: child.runId,
      goal,
      stepId: step.id,
      role: step.role ?? null,
      budget: context.budget.remaining(),
      resume: child.resume,
      onCreated: () => {
        if (!child.resume) context.events.append(context.runId, 'subagent.started', { stepId: step.id, childRunId: child.runId, goal, role: step.role ?? null, depth });
        correlationId = handOff(context, child.runId, goal);
      },
    });
  } finally {
    release();
  }
  const outcome = outcomeOf(context, child.runId, ended);
  if (correlationId) context.bus.publish(context.runId, { from: `subagent:${child.runId}`, to: 'coordinator', kind: 'result', correlationId, body: 'failed' in outcome ? outcome.failed : outcome.answer });
  return 'failed' in outcome ? { status: 'failed', reason: outcome.failed } : review(context, step, goal, dependencyResults, outcome.answer);
}

/** The child's answer through the same review as a step's result; one that is not accepted fails the step with the reason. */
async function review(context: RunContext, step: PlanStep, goal: string, dependencyResults: ReadonlyMap<string, string>, answer: string): Promise<StepOutcome> {
  const conversation = StepConversation.open(context.runs, { runId: context.runId, stepId: step.id, attempt: context.runs.stepAttempt(context.runId, step.id) }, () => [
    { role: 'system', content: 'A sub-agent carried out this step as a child run; its answer is the step result.' },
    { role: 'user', content: subagentBrief(context, step, goal, dependencyResults) },
  ]);
  conversation.push({ role: 'assistant', content: answer });
  const reviewed = await context.hooks.reviewResult(context, step, { result: answer, conversation, origin: 'model' });
  if (reviewed) return reviewed;
  const why = conversation.messages.at(-1);
  return { status: 'failed', reason: `validation_failed: the sub-agent's answer was not accepted: ${why && 'content' in why ? String(why.content) : 'no reason'}` };
}

/** Plan steps of kind `subagent`, each run as a child run. */
export const subagents: RunCapability = {
  name: 'subagents',
  hooks: {
    runStep: (context, step, dependencyResults) => (step.kind === 'subagent' ? runSubagentStep(context, step, dependencyResults) : undefined),
  },
};
