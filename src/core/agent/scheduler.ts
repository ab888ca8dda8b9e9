import type { Plan, PlanStep } from '../../shared/schemas/plan';
import type { StepStatus } from '../../shared/schemas/run';
import { dependentsOf } from '../planner/validate-plan';
import type { RunContext } from './run-context';
import { isRunLevel, type StepOutcome } from './step-executor';

export interface StepState {
  status: StepStatus;
  result: string | null;
}

export type StepRunner = (step: PlanStep, dependencyResults: ReadonlyMap<string, string>) => Promise<StepOutcome>;

/**
 * Runs a plan as a DAG: a step starts the moment its dependencies have completed, at most
 * `concurrency` at once, in plan order among the ready. A failed step skips everything downstream
 * of it. Each state change is stored before its event goes out. Returns every step's final state;
 * an error that ends the run (a stop, the budget, a rejection that says stop) stops the other steps
 * and is thrown once they have wound down.
 */
export async function runPlan(
  context: RunContext,
  plan: Plan,
  initial: ReadonlyMap<string, StepState>,
  concurrency: number,
  runStep: StepRunner,
): Promise<Map<string, StepState>> {
  const states = new Map(plan.steps.map((step) => [step.id, initial.get(step.id) ?? { status: 'pending' as StepStatus, result: null }]));
  const running = new Map<string, Promise<void>>();
  let fatal: unknown = null;
  const now = () => context.now().toISOString();

  const setState = (step: PlanStep, status: StepStatus, detail: { result?: string; error?: string } = {}) => {
    states.set(step.id, { status, result: detail.result ?? null });
    context.runs.setStepStatus(context.runId, step.id, status, now(), detail);
  };

  const skipDownstream = (failed: PlanStep) => {
    for (const id of dependentsOf(plan, failed.id)) {
      const step = plan.steps.find((candidate) => candidate.id === id) as PlanStep;
      if (states.get(id)?.status !== 'pending') continue;
      const reason = `Skipped because step "${failed.id}", which it depends on, did not complete.`;
      setState(step, 'skipped', { error: reason });
      context.events.append(context.runId, 'step.skipped', { stepId: id, reason });
    }
  };

  const start = (step: PlanStep) => {
    const dependencyResults = new Map(step.dependencies.map((id) => [id, states.get(id)?.result ?? '']));
    setState(step, 'running');
    context.events.append(context.runId, 'step.started', { stepId: step.id });
    const work = runStep(step, dependencyResults).then(
      (outcome) => {
        if (outcome.status === 'completed') {
          setState(step, 'completed', { result: outcome.result });
          context.events.append(context.runId, 'step.completed', { stepId: step.id, result: outcome.result });
        } else {
          setState(step, 'failed', { error: outcome.reason });
          context.events.append(context.runId, 'step.failed', { stepId: step.id, reason: outcome.reason });
          skipDownstream(step);
        }
      },
      (error: unknown) => {
        if (context.signal.aborted || isRunLevel(error)) {
          fatal ??= error;
          context.stopRun(error);
          setState(step, 'stopped', { error: error instanceof Error ? error.message : 'Stopped before it finished.' });
          return;
        }
        const reason = `Failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`;
        setState(step, 'failed', { error: reason });
        context.events.append(context.runId, 'step.failed', { stepId: step.id, reason });
        skipDownstream(step);
      },
    );
    running.set(step.id, work.finally(() => running.delete(step.id)));
  };

  const isReady = (step: PlanStep) => states.get(step.id)?.status === 'pending' && step.dependencies.every((id) => states.get(id)?.status === 'completed');

  for (const step of plan.steps) {
    if (states.get(step.id)?.status === 'failed') skipDownstream(step);
  }
  for (let round = 0; round <= plan.steps.length * 2; round++) {
    if (!context.signal.aborted) {
      for (const step of plan.steps) {
        if (running.size >= concurrency) break;
        if (isReady(step)) start(step);
      }
    }
    if (running.size === 0) break;
    try {
      await Promise.race(running.values());
    } catch (error) {
      // A state that could not be written (a full disk): stop every step and let them wind down before it is reported.
      context.stopRun(error);
      await Promise.allSettled(running.values());
      throw error;
    }
  }
  if (fatal !== null) throw fatal;
  return states;
}
