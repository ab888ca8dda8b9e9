import { randomUUID } from 'node:crypto';
import { ArchonError } from '../../shared/errors';
import type { Plan } from '../../shared/schemas/plan';
import type { RunOptions, RunStatus } from '../../shared/schemas/run';
import type { ToolApprovalOverride } from '../../shared/schemas/settings';
import type { ApprovalChannel } from '../approval/approval-channel';
import { requestApproval } from '../approval/approval-gate';
import type { RunEventLog } from '../events/run-event-log';
import type { ModelClient } from '../model/chat';
import type { EndpointProbe } from '../model/endpoint-probe';
import { planGoal } from '../planner/planner';
import type { RunStore } from '../store/run-store';
import type { ToolRegistry } from '../tools/tool-registry';
import { callModel, type RunContext } from './run-context';
import { runPlan, type StepState } from './scheduler';
import { executeStep } from './step-executor';

export const DEFAULT_CONCURRENCY = 4;

export interface RunEngineDependencies {
  runs: RunStore;
  events: RunEventLog;
  /** The tools a run may use, for its options (its workspace above all). */
  tools(options: RunOptions): ToolRegistry;
  approvals: ApprovalChannel;
  toolApproval?: Readonly<Record<string, ToolApprovalOverride>>;
  /** Probes the endpoint and returns a client for the model it settled on. */
  connect(options: RunOptions, signal: AbortSignal): Promise<{ probe: EndpointProbe; model: ModelClient }>;
  now?: () => Date;
  newId?: () => string;
}

export interface RunResult {
  runId: string;
  status: RunStatus;
  answer: string | null;
  error: string | null;
}

function finalAnswerMessages(context: RunContext, plan: Plan, states: ReadonlyMap<string, StepState>) {
  const results = plan.steps.map((step) => `- ${step.id} (${step.description}): ${states.get(step.id)?.result ?? ''}`).join('\n');
  return [
    { role: 'system' as const, content: "Write the final answer to the operator's goal from the results of the steps. Be direct and complete. Do not call tools." },
    { role: 'user' as const, content: `Goal: ${context.goal}\n\nResults of the steps:\n${results}` },
  ];
}

async function finalAnswer(context: RunContext, plan: Plan, states: ReadonlyMap<string, StepState>): Promise<string> {
  const response = await callModel(context, { purpose: 'final', messages: finalAnswerMessages(context, plan, states) }, null);
  return response.content.replace(/^\s*Final Answer\s*:\s*/i, '').trim();
}

function finish(context: RunContext, status: RunStatus, outcome: { answer?: string; error?: string }): RunResult {
  context.runs.setRunStatus(context.runId, status, context.now().toISOString(), outcome);
  if (status === 'completed') context.events.append(context.runId, 'run.completed', { answer: outcome.answer ?? '' });
  else if (status === 'stopped') context.events.append(context.runId, 'run.stopped', { reason: outcome.error ?? 'Stopped.' });
  else context.events.append(context.runId, 'run.failed', { error: outcome.error ?? 'The run failed.' });
  context.events.flush();
  return { runId: context.runId, status, answer: outcome.answer ?? null, error: outcome.error ?? null };
}

/** Plans (when there is no plan yet), runs the DAG, writes the final answer; every way out is recorded. */
async function drive(context: RunContext, concurrency: number, existing: { plan: Plan; states: Map<string, StepState> } | null): Promise<RunResult> {
  try {
    let plan = existing?.plan;
    if (!plan) {
      context.runs.setRunStatus(context.runId, 'planning', context.now().toISOString());
      plan = await planGoal(context.goal, { mode: context.mode, tools: context.tools, callModel: (request) => callModel(context, { purpose: 'plan', ...request }, null) });
      context.runs.savePlan(context.runId, plan.steps);
      context.events.append(context.runId, 'plan.ready', { plan });
    }
    context.runs.setRunStatus(context.runId, 'running', context.now().toISOString());
    const states = await runPlan(context, plan, existing?.states ?? new Map(), concurrency, (step, results) => executeStep(context, step, results));
    context.signal.throwIfAborted();
    const unfinished = plan.steps.filter((step) => states.get(step.id)?.status !== 'completed');
    if (unfinished.length > 0) {
      const failed = unfinished.map((step) => `${step.id} (${states.get(step.id)?.status})`).join(', ');
      return finish(context, 'failed', { error: `Not every step completed: ${failed}.` });
    }
    return finish(context, 'completed', { answer: await finalAnswer(context, plan, states) });
  } catch (error) {
    if (context.signal.aborted) return finish(context, 'stopped', { error: 'Stopped before it finished.' });
    if (ArchonError.isInstance(error)) return finish(context, 'failed', { error: error.message });
    throw error;
  }
}

function createContext(dependencies: RunEngineDependencies, run: { runId: string; goal: string; options: RunOptions; model: ModelClient; probe: EndpointProbe }, signal: AbortSignal): RunContext {
  return {
    runId: run.runId,
    goal: run.goal,
    options: run.options,
    mode: run.probe.toolCalling ? 'native' : 'text',
    signal,
    tools: dependencies.tools(run.options),
    model: run.model,
    approvals: dependencies.approvals,
    toolApproval: dependencies.toolApproval ?? {},
    runs: dependencies.runs,
    events: dependencies.events,
    now: dependencies.now ?? (() => new Date()),
    newId: dependencies.newId ?? randomUUID,
  };
}

function concurrencyFor(options: RunOptions, probe: EndpointProbe): number {
  return options.concurrency ?? probe.parallelSlots ?? DEFAULT_CONCURRENCY;
}

/** `archon run`: probe the endpoint (nothing is created if it is unreachable), then run the goal to its end. */
export async function startRun(dependencies: RunEngineDependencies, goal: string, options: RunOptions, signal: AbortSignal): Promise<RunResult> {
  const { probe, model } = await dependencies.connect(options, signal);
  const resolved = { ...options, model: probe.model };
  const runId = (dependencies.newId ?? randomUUID)();
  const context = createContext(dependencies, { runId, goal, options: resolved, model, probe }, signal);
  dependencies.runs.createRun({ id: runId, goal, policy: resolved.policy, options: resolved, now: context.now().toISOString() });
  context.events.append(runId, 'run.started', { goal, policy: resolved.policy });
  return drive(context, concurrencyFor(resolved, probe), null);
}

/**
 * A started tool call with no recorded result may or may not have happened. An idempotent one is
 * simply run again with its step; otherwise a person decides whether the step may run again.
 */
async function settleInterruptedCalls(context: RunContext, states: Map<string, StepState>): Promise<void> {
  for (const call of context.runs.unfinishedToolCalls(context.runId)) {
    context.runs.abandonToolCall(call.id, context.now().toISOString());
    if (call.idempotent) continue;
    const decision = await requestApproval(context, {
      kind: 'resume_side_effect',
      stepId: call.stepId,
      summary: `Step ${call.stepId} was interrupted during ${call.tool} ${JSON.stringify(call.args)}; it may or may not have run. Run the step again?`,
      action: { tool: call.tool, args: call.args, toolCallId: call.id },
    });
    if (decision.verdict === 'reject') states.set(call.stepId, { status: 'failed', result: null });
  }
}

/** `archon resume`: completed steps keep their results and are not run again. */
export async function resumeRun(dependencies: RunEngineDependencies, runId: string, overrides: Partial<RunOptions>, signal: AbortSignal): Promise<RunResult> {
  const stored = dependencies.runs.getRun(runId);
  if (!stored) throw new ArchonError('NOT_FOUND', `There is no run ${runId} in this data folder. \`archon runs\` lists the runs.`);
  if (['completed', 'failed', 'rejected', 'budget_exhausted'].includes(stored.summary.status)) {
    throw new ArchonError('CONFIG_INVALID', `Run ${runId} already ended (${stored.summary.status}); there is nothing to resume.`);
  }
  const options = { ...stored.options, ...overrides };
  const { probe, model } = await dependencies.connect(options, signal);
  const context = createContext(dependencies, { runId, goal: stored.summary.goal, options: { ...options, model: probe.model }, model, probe }, signal);
  const steps = dependencies.runs.getSteps(runId);
  const states = new Map<string, StepState>(
    steps.map((step) => [step.spec.id, step.status === 'completed' ? { status: 'completed', result: step.result } : { status: 'pending', result: null }]),
  );
  context.events.append(runId, 'run.resumed', { completedSteps: steps.filter((step) => step.status === 'completed').map((step) => step.spec.id) });
  try {
    await settleInterruptedCalls(context, states);
  } catch (error) {
    if (context.signal.aborted) return finish(context, 'stopped', { error: 'Stopped before it finished.' });
    throw error;
  }
  for (const [stepId, state] of states) {
    if (state.status === 'failed') dependencies.runs.setStepStatus(runId, stepId, 'failed', context.now().toISOString(), { error: 'Not run again: the operator declined to repeat a side effect that may have happened.' });
  }
  const plan = steps.length > 0 ? { goal: stored.summary.goal, steps: steps.map((step) => step.spec) } : null;
  return drive(context, concurrencyFor(context.options, probe), plan ? { plan, states } : null);
}
