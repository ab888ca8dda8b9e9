import { REPLACED, type PlanView, type Recover, type Recovery, type StepOutcome, type StepState } from '../run/plan-view';
import { planIndex, type PlanIndex } from '../../shared/plan-graph';
import type { Plan, PlanStep } from '../../shared/schemas/plan';
import type { StepStatus } from '../../shared/schemas/run';
import type { RunContext } from '../run/run-context';
import { isRunLevel } from '../run/run-level';
import { rememberResult } from '../memory/working-memory';

export type StepRunner = (step: PlanStep, dependencyResults: ReadonlyMap<string, string>) => Promise<StepOutcome>;

/** Where a step goes among steps kept in plan order (binary search). */
function placeOf(steps: readonly PlanStep[], position: number, index: PlanIndex): number {
  let low = 0;
  let high = steps.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((index.position.get((steps[middle] as PlanStep).id) ?? 0) < position) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** One recovery at a time, each handed the plan as the one before it left it (read when its turn comes). */
function serialized(recover: Recover, view: () => PlanView): (failed: PlanStep, reason: string, resumed: boolean) => Promise<Recovery> {
  let queue: Promise<unknown> = Promise.resolve();
  return (failed, reason, resumed) => {
    const next = queue.then(() => recover(failed, reason, view(), resumed));
    queue = next.catch(() => undefined);
    return next;
  };
}

/**
 * Runs a plan as a DAG: a step starts the moment its dependencies have completed (or were waived), at
 * most `concurrency` at once, in plan order among the ready. A failed step goes to `recover`; what it
 * cannot recover skips everything downstream; a step that `unrecovered` names (failed, its recovery
 * cut short by the end of an earlier process) goes on to its recovery, never runs again from scratch.
 * Each state change is stored before its event goes out.
 * Returns the plan as it ended (revised or not) and every step's final state; an error that ends the
 * run (a stop, the budget, a rejection that says stop, a recovery that ends it) stops the other steps
 * and is thrown once they have wound down.
 */
export async function runPlan(
  context: RunContext,
  initialPlan: Plan,
  initial: ReadonlyMap<string, StepState>,
  concurrency: number,
  runStep: StepRunner,
  recover?: Recover,
  unrecovered: ReadonlyMap<string, string> = new Map(),
): Promise<PlanView & { states: Map<string, StepState> }> {
  let plan = initialPlan;
  let index = planIndex(plan);
  /** Steps whose dependencies are done, in plan order: filled as steps complete, so no round rescans the plan. */
  let ready: PlanStep[] = [];
  const states = new Map(plan.steps.map((step) => [step.id, initial.get(step.id) ?? { status: 'pending' as StepStatus, result: null }]));
  const running = new Map<string, Promise<void>>();
  const recoverOne = recover ? serialized(recover, () => ({ plan, states })) : null;
  let fatal: unknown = null;
  let recoveries = 0;
  const now = () => context.now().toISOString();

  const isDone = (id: string) => states.get(id)?.status === 'completed' || states.get(id)?.waived === true;
  const isReady = (step: PlanStep) => states.get(step.id)?.status === 'pending' && step.dependencies.every(isDone);
  const reindex = () => {
    index = planIndex(plan);
    ready = plan.steps.filter(isReady);
  };
  const offerDependants = (id: string) => {
    for (const step of index.dependentsOf(id).map((dependent) => index.byId.get(dependent) as PlanStep)) {
      if (isReady(step)) ready.splice(placeOf(ready, index.position.get(step.id) ?? 0, index), 0, step);
    }
  };

  const setState = (step: PlanStep, status: StepStatus, detail: { result?: string; error?: string; waived?: boolean } = {}) => {
    states.set(step.id, { status, result: detail.result ?? null, ...(detail.waived ? { waived: true } : {}) });
    context.runs.setStepStatus(context.runId, step.id, status, now(), detail);
  };

  const skipDownstream = (failed: PlanStep) => {
    for (const id of index.downstreamOf(failed.id)) {
      const step = index.byId.get(id) as PlanStep;
      if (states.get(id)?.status !== 'pending') continue;
      const reason = `Skipped because step "${failed.id}", which it depends on, did not complete.`;
      setState(step, 'skipped', { error: reason });
      context.events.append(context.runId, 'step.skipped', { stepId: id, reason });
    }
  };

  const endRun = (error: unknown) => {
    fatal ??= error;
    context.stopRun(error);
  };

  const applyRecovery = (failed: PlanStep, recovery: Recovery) => {
    if (recovery === null) return skipDownstream(failed);
    if (recovery.kind === 'end') {
      skipDownstream(failed);
      return endRun(recovery.error);
    }
    if (recovery.kind === 'revise') {
      // The store marked them when it stored the revision; here they leave the plan in memory.
      for (const id of recovery.replaced) {
        if (states.get(id)?.status !== 'pending') continue;
        states.set(id, { status: 'skipped', result: null });
        context.events.append(context.runId, 'step.skipped', { stepId: id, reason: REPLACED });
      }
      plan = recovery.plan;
      for (const step of plan.steps) if (!states.has(step.id)) states.set(step.id, { status: 'pending', result: null });
      return reindex();
    }
    if (recovery.kind === 'skip') {
      setState(failed, 'skipped', { error: 'Skipped by the operator; the steps after it run without its result.', waived: true });
      context.events.append(context.runId, 'step.skipped', { stepId: failed.id, reason: 'Skipped by the operator at an escalation.' });
      return offerDependants(failed.id);
    }
    plan = { ...plan, steps: plan.steps.map((step) => (step.id === recovery.step.id ? recovery.step : step)) };
    states.set(failed.id, { status: 'pending', result: null });
    reindex();
  };

  const recoverFrom = async (step: PlanStep, reason: string, resumed: boolean) => {
    if (!recoverOne || context.signal.aborted) return skipDownstream(step);
    recoveries++;
    applyRecovery(step, await recoverOne(step, reason, resumed));
  };

  const fail = async (step: PlanStep, reason: string) => {
    setState(step, 'failed', { error: reason });
    context.events.append(context.runId, 'step.failed', { stepId: step.id, reason });
    return recoverFrom(step, reason, false);
  };

  const settle = async (step: PlanStep, work: Promise<StepOutcome>) => {
    let outcome: StepOutcome;
    try {
      outcome = await work;
    } catch (error) {
      if (context.signal.aborted || isRunLevel(error)) {
        endRun(error);
        setState(step, 'stopped', { error: error instanceof Error ? error.message : 'Stopped before it finished.' });
        return;
      }
      return fail(step, `Failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (outcome.status === 'completed') {
      context.runs.together(() => {
        setState(step, 'completed', { result: outcome.result });
        rememberResult(context, step.id, outcome.result);
      });
      context.events.append(context.runId, 'step.completed', { stepId: step.id, result: outcome.result });
      offerDependants(step.id);
    } else await fail(step, outcome.reason);
  };

  const start = (step: PlanStep) => {
    const dependencyResults = new Map(step.dependencies.map((id) => [id, states.get(id)?.result ?? '']));
    setState(step, 'running');
    const role = context.roles.registry.roleOf(step);
    context.events.append(context.runId, 'step.started', { stepId: step.id, role, roleTools: context.roles.registry.get(role)?.tools ?? 'all', ...(context.worker ? { worker: context.worker } : {}) });
    running.set(step.id, settle(step, runStep(step, dependencyResults)).finally(() => running.delete(step.id)));
  };

  for (const step of plan.steps) {
    if (states.get(step.id)?.status !== 'failed') continue;
    const reason = unrecovered.get(step.id);
    if (reason === undefined) skipDownstream(step);
    else running.set(step.id, recoverFrom(step, reason, true).finally(() => running.delete(step.id)));
  }
  reindex();
  // Each round waits for one step to settle: bounded by the steps there are and the recoveries made (each bounded by its own budget).
  for (let round = 0; round <= (plan.steps.length + recoveries) * 2; round++) {
    if (!context.signal.aborted) {
      while (running.size < concurrency && ready.length > 0) {
        const step = ready.shift() as PlanStep;
        if (isReady(step)) start(step);
      }
    }
    if (running.size === 0) break;
    try {
      await Promise.race(running.values());
    } catch (error) {
      // A state that could not be written (a full disk), or a recovery that ends the run: stop every step and let them wind down before it is reported.
      context.stopRun(error);
      await Promise.allSettled(running.values());
      throw error;
    }
  }
  if (fatal !== null) throw fatal;
  return { plan, states };
}
