import { execFileSync } from 'node:child_process';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { launchRun } from '../../../src/core/agent/run-launcher';
import type { ApprovalChannel } from '../../../src/core/approval/approval-channel';
import { modelConnector } from '../../../src/core/model/connect';
import { runCapabilities } from '../../../src/core/capabilities';
import { childProcessLauncher } from '../../../src/core/process/child-process-launcher';
import type { ArchonRuntime } from '../../../src/core/runtime';
import { EmergencyStop } from '../../../src/core/stop/emergency-stop';
import { foldersHiddenFromTools } from '../../../src/core/tools/hidden-folders';
import { ToolHost } from '../../../src/core/tools/tool-host';
import { SHARED_CALLS_PER_WORKER, toolWorkerCap } from '../../../src/core/tools/tool-worker-pool';
import type { ToolWorkerStats } from '../../../src/core/tools/tool-worker-pool';
import { RunOptionsSchema } from '../../../src/shared/schemas/run';
import type { Settings } from '../../../src/shared/schemas/settings';
import { planReply, startModelServer, stepIdOf, toolMessagesOf, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { builtFile, PROJECT_ROOT } from '../../support/built';
import { useRuntimes } from '../../support/runtime';

const openRuntime = useRuntimes();
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** This test process's live tool workers, from the process table. */
function liveWorkers(): string[] {
  return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes('executor.js'));
}

/**
 * Holds every GET until `width` are held at once, then answers them all; bounded: after 60 s it answers
 * what it holds. `maxHeld` is how many tool calls were in flight together.
 */
async function startBarrier(width: number): Promise<{ url: string; maxHeld: () => number; close(): Promise<void> }> {
  const held: ServerResponse[] = [];
  let maxHeld = 0;
  const releaseAll = () => {
    for (const response of held.splice(0)) response.end('through');
  };
  const server: Server = createServer((_request, response) => {
    held.push(response);
    maxHeld = Math.max(maxHeld, held.length);
    if (held.length >= width) releaseAll();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const failsafe = setInterval(releaseAll, 60_000);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    maxHeld: () => maxHeld,
    close: async () => {
      clearInterval(failsafe);
      releaseAll();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A model whose plan is `width` independent leaves, each calling http_get on `url` once, then answering. */
async function fanOutModel(width: number, url: string): Promise<ScriptedModelServer> {
  const model = await startModelServer({
    reply: (request) => {
      if (request.purpose === 'plan') return planReply(Array.from({ length: width }, (_, index) => ({ id: `leaf${index}`, description: `fetch part ${index}` })));
      if (request.purpose === 'step' && toolMessagesOf(request).length === 0) return { toolCalls: [{ name: 'http_get', arguments: { url: `${url}${stepIdOf(request) ?? 'x'}` } }] };
      return { content: 'done' };
    },
  });
  closers.push(() => model.close());
  return model;
}

interface Scenario {
  runtime: ArchonRuntime;
  host: ToolHost;
  estop: EmergencyStop;
  /** The pool as it stood at each event of the run, in order. */
  seen: { type: string; stats: ToolWorkerStats }[];
}

function scenario(toolWorkers: Settings['toolWorkers']): Scenario {
  const runtime = openRuntime();
  const settings = { ...runtime.store.getSettings(), networkTools: true, toolWorkers };
  const host = new ToolHost({ launcher: childProcessLauncher, entry: builtFile('node/executor.js'), readableRoots: [PROJECT_ROOT], hiddenFolders: foldersHiddenFromTools(runtime.dataDir), settings, log: runtime.log });
  closers.push(() => host.close());
  const seen: Scenario['seen'] = [];
  const unsubscribe = runtime.bus.subscribe((event) => seen.push({ type: event.type, stats: host.workers() }));
  closers.push(async () => unsubscribe());
  return { runtime, host, estop: new EmergencyStop(runtime.store, runtime.bus, runtime.now), seen };
}

function launch(target: Scenario, model: ScriptedModelServer, approvals: ApprovalChannel, concurrency: number) {
  const { runtime, host, estop } = target;
  const options = RunOptionsSchema.parse({ modelUrl: model.url, model: '', policy: 'balanced', concurrency, maxTokens: null, maxCostUsd: null, workspace: runtime.dataDir, maxIterations: 10 });
  const settings = runtime.store.getSettings();
  return launchRun({ runtime, settings, approvals, estop, tools: host, connect: modelConnector({ apiKeyFor: () => undefined, contextLength: () => null }), capabilities: runCapabilities }, { goal: 'fan out', options }, new AbortController().signal);
}

/** Approves everything; the plan only once `atPlan` has looked at the pool. */
function approvingAfter(atPlan: () => Promise<void>): ApprovalChannel {
  return {
    canRaiseBudgets: false,
    decide: async (request) => {
      if (request.kind === 'plan') await atPlan();
      return { verdict: 'approve' };
    },
  };
}

describe('the tool worker pool size', () => {
  it('bounds the pool by the setting, else by 16 tool workers per core within 8..64', () => {
    expect(toolWorkerCap(3, 2)).toBe(3);
    expect(toolWorkerCap(null, 2)).toBe(32);
    expect(toolWorkerCap(null, 1)).toBe(16);
    expect(toolWorkerCap(null, 32)).toBe(64);
    expect(toolWorkerCap(undefined, 0)).toBe(8);
  });
});

describe('tool workers warmed before they are needed', () => {
  it("warms the pool for the widest level's read-only calls (8 to a worker) while the plan awaits approval, grows it past 8 for 32 calls with side effects at once, and releases every worker when the run ends", async () => {
    const width = 32;
    const barrier = await startBarrier(width);
    closers.push(() => barrier.close());
    const model = await fanOutModel(width, barrier.url);
    const target = scenario(width);
    const warmed = width / SHARED_CALLS_PER_WORKER;
    let atApproval: ToolWorkerStats | null = null;
    const result = await launch(target, model, approvingAfter(async () => {
      atApproval = target.host.workers();
      // Every warmed worker is a live process before the first step starts (bounded: the run's own expiry stops it otherwise).
      await expect.poll(() => target.host.workers().ready, { timeout: 120_000, interval: 200 }).toBeGreaterThanOrEqual(warmed);
      expect(liveWorkers().length).toBeGreaterThanOrEqual(warmed);
    }), width);

    expect(result.status).toBe('completed');
    expect(atApproval).toMatchObject({ plain: warmed });
    const firstStep = target.seen.find((entry) => entry.type === 'step.started');
    expect(firstStep?.stats.plain).toBeGreaterThanOrEqual(warmed);
    // http_get has side effects: each call holds a worker of its own, so the pool grew to 32.
    expect(barrier.maxHeld()).toBe(width);
    expect(target.runtime.store.runs.getSteps(result.runId).map((step) => step.status)).toEqual(Array(width).fill('completed'));
    await target.host.close();
    expect(liveWorkers()).toEqual([]);
  }, 240_000);

  it('caps the pool at Settings.toolWorkers: a 6-wide plan with a cap of 3 warms 3 and never runs more', async () => {
    const barrier = await startBarrier(3);
    closers.push(() => barrier.close());
    const model = await fanOutModel(6, barrier.url);
    const target = scenario(3);
    const result = await launch(target, model, approvingAfter(async () => undefined), 6);

    expect(result.status).toBe('completed');
    const atPlan = target.seen.find((entry) => entry.type === 'approval.requested');
    expect(atPlan?.stats.plain).toBeLessThanOrEqual(3);
    expect(Math.max(...target.seen.map((entry) => entry.stats.plain))).toBe(3);
    expect(barrier.maxHeld()).toBe(3);
    expect(target.runtime.store.runs.getSteps(result.runId).every((step) => step.status === 'completed')).toBe(true);
  }, 240_000);

  it('leaves no tool process when the emergency stop fires while the pool is warming', async () => {
    const model = await fanOutModel(16, 'http://127.0.0.1:9/');
    const target = scenario(null);
    let afterStop: string[] | null = null;
    let warmingAtStop: ToolWorkerStats | null = null;
    let stopped: Promise<unknown> = Promise.resolve();
    const result = await launch(target, model, approvingAfter(async () => {
      warmingAtStop = target.host.workers();
      stopped = target.estop.trigger('operator', 'stopped while warming');
      await stopped;
      afterStop = liveWorkers();
    }), 16);
    // The run may report its end before the stop's own hooks have all returned: the stop is what promises no process is left.
    await stopped;
    afterStop ??= liveWorkers();

    expect(result.status).toBe('stopped');
    expect((warmingAtStop as ToolWorkerStats | null)?.plain).toBeGreaterThanOrEqual(16 / SHARED_CALLS_PER_WORKER);
    expect(afterStop).toEqual([]);
    expect(target.seen.some((entry) => entry.type === 'step.started')).toBe(false);
  }, 120_000);
});
