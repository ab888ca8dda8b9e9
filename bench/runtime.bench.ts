import { performance } from 'node:perf_hooks';
import type { PlanStep } from '../src/shared/schemas/plan';
import type { RunOptions } from '../src/shared/schemas/run';
import { approveAll } from '../src/core/approval/approval-channel';
import { startRun } from '../src/core/agent/run-engine';
import type { RunContext } from '../src/core/run/run-context';
import { runCapabilities } from '../src/core/capabilities';
import { combineHooks } from '../src/core/run/hooks';
import { runPlan } from '../src/core/agent/scheduler';
import { modelConnector } from '../src/core/model/connect';
import { ToolRegistry } from '../src/core/tools/tool-registry';
import { BudgetMeter } from '../src/core/budget/budget-meter';
import { ToolLocks } from '../src/core/run/tool-locks';
import type { ModelClient } from '../src/core/model/chat';
import { RoleModels } from '../src/core/roles/role-models';
import { DEFAULT_STEP_ROLE, RoleRegistry } from '../src/core/roles/role-registry';
import { AgentBus } from '../src/core/bus/agent-bus';
import { planReply, startModelServer, stepIdOf } from '../test/kit/scripted-model-server';
import { line, ms, withRuntime } from './support';

const LATENCY_MS = 250;

/** Eight independent steps then one that needs them all: the critical path is two model turns. */
async function parallelEfficiency(): Promise<void> {
  const steps = [
    ...Array.from({ length: 8 }, (_, index) => ({ id: `p${index}`, description: `parallel task ${index}` })),
    { id: 'join', description: 'combine them', dependencies: Array.from({ length: 8 }, (_, index) => `p${index}`) },
  ];
  const server = await startModelServer({
    latencyMs: LATENCY_MS,
    reply: (request) => (request.purpose === 'plan' ? planReply(steps) : { content: `done ${stepIdOf(request) ?? request.purpose}` }),
  });
  try {
    await withRuntime(async (runtime) => {
      const dependencies = { runs: runtime.store.runs, events: runtime.events, tools: () => new ToolRegistry([]), approvals: approveAll, connect: modelConnector({}), capabilities: runCapabilities };
      const options = { modelUrl: server.url, model: '', policy: 'balanced' as const, concurrency: 8, maxTokens: null, maxCostUsd: null, workspace: process.cwd(), maxIterations: 10, verification: 'checks' as const, repairBudget: 2, maxReplans: 3 };
      await startRun(dependencies, 'bench', options, new AbortController().signal);
      const stepRequests = server.chatRequests.filter((request) => request.purpose === 'step');
      const first = Math.min(...stepRequests.map((request) => request.at));
      const last = Math.max(...stepRequests.map((request) => request.at)) + LATENCY_MS;
      const criticalPath = 2 * LATENCY_MS;
      line('model span / critical path (8 parallel + 1 join)', ((last - first) / criticalPath).toFixed(3), '≤ 1.3');
      line('peak model requests in flight', String(server.stats.maxInFlight), '8');
    });
  } finally {
    await server.close();
  }
}

export function contextFor(runtime: Parameters<Parameters<typeof withRuntime>[0]>[0], runId: string): RunContext {
  const options: RunOptions = { modelUrl: 'http://127.0.0.1:1/v1', model: 'x', policy: 'balanced', concurrency: 8, maxTokens: null, maxCostUsd: null, workspace: '/tmp', maxIterations: 10, verification: 'checks' as const, repairBudget: 2, maxReplans: 3 };
  const model: ModelClient = { baseUrl: '', model: '', chat: () => Promise.reject(new Error('no model in this bench')) };
  const probe = { baseUrl: options.modelUrl, models: ['x'], model: 'x', toolCalling: true, streaming: true, reason: null, contextLength: null, contextSource: null, parallelSlots: null };
  const registry = new RoleRegistry();
  const tools = new ToolRegistry([]);
  return {
    runId,
    goal: 'bench',
    options,
    policy: 'balanced',
    mode: 'native',
    dialect: null,
    signal: new AbortController().signal,
    stopRun: () => undefined,
    tools,
    warmTools: () => undefined,
    lockedTools: new ToolLocks(),
    toolGrants: new Set(),
    expiryMs: {},
    guardsInjection: true,
    budget: new BudgetMeter({ maxTokens: null, maxCostUsd: null, dayMaxTokens: null, dayMaxCostUsd: null, maxModelCalls: 1e6, maxToolCalls: 1e6 }, { tokens: 0, costUsd: 0, dayTokens: 0, dayCostUsd: 0, modelCalls: 0, toolCalls: 0 }, { inputPerMillion: 0, outputPerMillion: 0, known: true }),
    plan: null,
    hooks: combineHooks(runCapabilities({})),
    capabilityStates: new Map(),
    replicate: () => Promise.resolve(),
    model,
    contextWindow: null,
    role: DEFAULT_STEP_ROLE,
    roles: { registry, models: RoleModels.bind(registry, { options, probe, model, price: { inputPerMillion: 0, outputPerMillion: 0, known: true } }), tools },
    approvals: approveAll,
    toolApproval: {},
    runs: runtime.store.runs,
    events: runtime.events,
    subagents: { run: () => Promise.reject(new Error('no sub-agents in this bench')), acquireSlot: () => Promise.resolve(() => undefined) },
    bus: new AgentBus(runtime.store.runs.busMessages, runtime.events),
    now: () => new Date(),
    newId: () => crypto.randomUUID(),
  };
}

export function seedRun(runtime: Parameters<Parameters<typeof withRuntime>[0]>[0], runId: string, steps: PlanStep[]): void {
  runtime.store.runs.createRun({ id: runId, goal: 'bench', policy: 'balanced', options: contextFor(runtime, runId).options, now: new Date().toISOString() });
  runtime.store.runs.savePlan(runId, steps);
}

/** The scheduler's own cost per step, with steps that finish at once: state writes, events, readiness. */
async function schedulerOverhead(): Promise<void> {
  await withRuntime(async (runtime) => {
    const steps = Array.from({ length: 64 }, (_, index) => ({ id: `s${index}`, description: 'x', dependencies: index >= 8 ? [`s${index - 8}`] : [] }));
    const rounds = 20;
    let total = 0;
    for (let round = 0; round < rounds; round++) {
      seedRun(runtime, `sched-${round}`, steps);
      const started = performance.now();
      await runPlan(contextFor(runtime, `sched-${round}`), { goal: 'bench', steps }, new Map(), 8, async () => ({ status: 'completed', result: 'ok' }));
      total += performance.now() - started;
    }
    line('scheduler overhead per step (64-step DAG)', ms(total / (rounds * steps.length)));
  });
}

/**
 * What one step's checkpoint costs (its state rows and events, committed) early and late in one run
 * of 5,000 steps: the writes are deltas, so the cost should not grow with the run.
 */
async function checkpointCost(): Promise<void> {
  await withRuntime(async (runtime) => {
    const total = 5000;
    const steps = Array.from({ length: total }, (_, index) => ({ id: `c${index}`, description: 'x', dependencies: [] }));
    seedRun(runtime, 'checkpoints', steps);
    const { events } = runtime;
    const timings: number[] = [];
    for (let index = 0; index < total; index++) {
      const started = performance.now();
      const now = new Date().toISOString();
      runtime.store.runs.setStepStatus('checkpoints', `c${index}`, 'running', now);
      events.append('checkpoints', 'step.started', { stepId: `c${index}` });
      runtime.store.runs.setStepStatus('checkpoints', `c${index}`, 'completed', now, { result: 'ok' });
      events.append('checkpoints', 'step.completed', { stepId: `c${index}`, result: 'ok' });
      events.flush();
      timings.push(performance.now() - started);
    }
    const around = (step: number) => {
      const window = timings.slice(Math.max(0, step - 6), step + 5).sort((a, b) => a - b);
      return window[Math.floor(window.length / 2)] as number;
    };
    const early = around(10);
    const late = around(5000 - 1);
    line('checkpoint write at step 10', ms(early));
    line('checkpoint write at step 5,000', ms(late));
    line('ratio (step 5,000 / step 10)', (late / early).toFixed(2), '≤ 2');
  });
}

export async function runtimeBenchmarks(): Promise<void> {
  process.stdout.write('\n## Runtime (issue #3)\n');
  await parallelEfficiency();
  await schedulerOverhead();
  await checkpointCost();
}
