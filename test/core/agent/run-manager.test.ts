import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PendingApprovals } from '../../../src/core/approval/pending-approvals';
import { RunManager, type RunManagerOptions } from '../../../src/core/agent/run-manager';
import { modelConnector } from '../../../src/core/model/connect';
import { runCapabilities } from '../../../src/core/capabilities';
import { retryPolicyFrom } from '../../../src/core/model/retry-policy';
import { childProcessLauncher } from '../../../src/core/process/child-process-launcher';
import { EmergencyStop } from '../../../src/core/stop/emergency-stop';
import { foldersHiddenFromTools } from '../../../src/core/tools/hidden-folders';
import { ToolHost } from '../../../src/core/tools/tool-host';
import { ArchonError } from '../../../src/shared/errors';
import { RunOptionsSchema } from '../../../src/shared/schemas/run';
import { planReply, requestText, startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { PROJECT_ROOT } from '../../support/built';
import { freePorts } from '../../support/restate';
import { useRuntimes } from '../../support/runtime';

/** A start nobody cancels: these tests never leave before the run exists. */
const NO_ASKER = new AbortController().signal;

const openRuntime = useRuntimes();
let model: ScriptedModelServer | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

type Runtime = ReturnType<typeof openRuntime>;
type ToolHostOptions = ConstructorParameters<typeof ToolHost>[0];

/**
 * A manager over `runtime` running against `modelUrl` with the built executor's tools; its approvals
 * are all approved unless `held()` says to leave them waiting for now.
 */
function managerFor(
  runtime: Runtime,
  modelUrl: string,
  { toolHost = (options) => new ToolHost(options), held = () => false, runOptions = {}, ...hooks }: { toolHost?: (options: ToolHostOptions) => ToolHost; held?: () => boolean; runOptions?: Record<string, unknown> } & Pick<RunManagerOptions, 'onRunEnded' | 'onIdle'> = {},
): { manager: RunManager; approvals: PendingApprovals; approveAll(): void } {
  const approvals = new PendingApprovals((id) => runtime.store.runs.approvalStatus(id));
  const approveAll = () => {
    for (const request of approvals.list()) approvals.answer(request.id, request.actionHash, { verdict: 'approve' });
  };
  approvals.onChange(() => {
    if (!held()) approveAll();
  });
  const options = RunOptionsSchema.parse({ modelUrl, model: '', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: runtime.dataDir, maxIterations: 10, ...runOptions });
  const manager = new RunManager({
    runtime,
    estop: new EmergencyStop(runtime.store, runtime.bus, runtime.now),
    approvals,
    defaults: () => options,
    connect: modelConnector({ apiKeyFor: () => undefined, retry: retryPolicyFrom(runtime.store.getSettings()), contextLength: () => null }),
    capabilities: runCapabilities,
    toolHost: (settings) => toolHost({ launcher: childProcessLauncher, entry: `${PROJECT_ROOT}out/node/executor.js`, readableRoots: [PROJECT_ROOT], hiddenFolders: foldersHiddenFromTools(runtime.dataDir), settings, log: runtime.log }),
    ...hooks,
  });
  return { manager, approvals, approveAll };
}

describe('the run manager', () => {
  it('treats a run whose end is stored as over while its tools are still closing: not active, and deleting it waits for them', async () => {
    const runtime = openRuntime();
    model = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'say hello' }]) : { content: 'hello' }) });
    let release = () => {};
    const closing = new Promise<void>((resolve) => (release = resolve));
    let closeCalled = false;
    const { manager } = managerFor(runtime, model.url, {
      // The tools of a finished run take their time to close: the window in which the page asks about the run.
      toolHost: (options) =>
        new (class extends ToolHost {
          override async close(): Promise<void> {
            closeCalled = true;
            await closing;
            await super.close();
          }
        })(options),
    });
    const { runId } = await manager.start({ goal: 'greet' }, NO_ASKER);
    await expect.poll(() => closeCalled, { timeout: 60_000 }).toBe(true);

    expect(runtime.store.runs.getRun(runId)?.summary.status).toBe('completed');
    expect(manager.detail(runId).active).toBe(false);
    let deleted = false;
    const deleting = manager.delete(runId).then(() => (deleted = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(deleted).toBe(false);
    release();
    await deleting;
    expect(runtime.store.runs.getRun(runId)).toBeNull();
    await manager.close();
  }, 120_000);

  it('refuses at once, saying where to set a price, a run from the app with a cost cap against a model nobody priced; with a price in Settings it starts', async () => {
    const runtime = openRuntime();
    model = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'say hello' }]) : { content: 'hello' }), models: ['mystery-model'] });
    // Through an address Archon does not count as this machine: the model is not free.
    const { manager } = managerFor(runtime, model.url.replace('127.0.0.1', '[::ffff:127.0.0.1]'));
    await expect(manager.start({ goal: 'capped', maxCostUsd: 1 }, NO_ASKER)).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringMatching(/price of model "mystery-model" is unknown.*Settings/) });
    expect(runtime.store.runs.listRuns(10)).toEqual([]);
    runtime.store.updateSettings({ modelPrices: { 'mystery-model': { inputPerMillion: 1, outputPerMillion: 4 } } });
    const { runId } = await manager.start({ goal: 'capped', maxCostUsd: 1 }, NO_ASKER);
    await expect.poll(() => runtime.store.runs.getRun(runId)?.summary.status, { timeout: 60_000 }).toBe('completed');
    expect(runtime.store.runs.getRun(runId)?.summary).toMatchObject({ priceKnown: true, costUsd: expect.any(Number) });
    expect(runtime.store.runs.getRun(runId)?.summary.costUsd).toBeGreaterThan(0);
    await manager.close();
  }, 120_000);
  it("counts a sub-agent as active while its parent is driven here, and refuses to start a second driver for it or to delete it; deleting the parent deletes it", async () => {
    const runtime = openRuntime();
    model = await startModelServer({
      reply: (request) => {
        const child = requestText(request).includes('Goal: Find the capital');
        if (request.purpose === 'plan') return child ? planReply([{ id: 'lookup', description: 'Look it up' }]) : planReply([{ id: 'research', kind: 'subagent', goal: 'Find the capital of France' }]);
        // The child's step hangs: the parent is driving it while the page asks about it.
        return request.purpose === 'step' ? { hang: true } : { content: 'done' };
      },
    });
    const { manager } = managerFor(runtime, model.url);
    const { runId } = await manager.start({ goal: 'Write a report on France' }, NO_ASKER);
    await expect.poll(() => model?.chatRequests.some((request) => request.purpose === 'step'), { timeout: 60_000 }).toBe(true);
    const childId = runtime.store.runs.listRuns(10).find((run) => run.parentRunId === runId)?.id as string;
    expect(childId).toBeDefined();
    expect(manager.detail(childId).active).toBe(true);
    await expect(manager.resume(childId)).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining(`sub-agent of run ${runId}`) });
    await expect(manager.delete(childId)).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining(`sub-agent of run ${runId}`) });
    expect(runtime.store.runs.getRun(childId)).not.toBeNull();
    await manager.close();
    expect(manager.detail(childId).active).toBe(false);
    // Deleting the parent takes its sub-agent's run with it: no orphan is left in the list.
    await manager.delete(runId);
    expect(runtime.store.runs.getRun(runId)).toBeNull();
    expect(runtime.store.runs.getRun(childId)).toBeNull();
  }, 120_000);

  it("sends a role's calls to the role's own server: only the run's own server is taken from the probe made at the start", async () => {
    const runtime = openRuntime();
    model = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'say hello', expected_output: 'a greeting' }]) : { content: 'hello' }) });
    const judge = await startModelServer({ reply: () => ({ content: 'Verdict: {"verdict": "pass", "gap": 0, "reason": "It greets."}' }) });
    try {
      const ended: string[] = [];
      const roles = { critic: { model: { url: judge.url, name: 'scripted-model' } } };
      const { manager } = managerFor(runtime, model.url, { runOptions: { roles, verification: 'critic' }, onRunEnded: (runId) => ended.push(runId) });
      const { runId } = await manager.start({ goal: 'greet' }, NO_ASKER);
      await expect.poll(() => ended.includes(runId), { timeout: 60_000 }).toBe(true);

      expect(runtime.store.runs.getRun(runId)?.summary.status).toBe('completed');
      expect(judge.countByPurpose().critic).toBeGreaterThanOrEqual(1);
      expect(model.countByPurpose().critic ?? 0).toBe(0);
      await manager.close();
    } finally {
      await judge.close();
    }
  }, 120_000);

  it('holds nothing in memory for a finished run: the store keeps it, the manager and the event log let it go', async () => {
    const runtime = openRuntime();
    model = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'say hello' }]) : { content: 'hello' }) });
    const ended: string[] = [];
    const { manager, approvals } = managerFor(runtime, model.url, { onRunEnded: (runId) => ended.push(runId) });
    const runIds: string[] = [];
    for (let index = 0; index < 3; index++) {
      const { runId } = await manager.start({ goal: `greet ${index}` }, NO_ASKER);
      runIds.push(runId);
      await expect.poll(() => ended.includes(runId), { timeout: 60_000 }).toBe(true);
    }

    expect(runIds.map((runId) => runtime.store.runs.getRun(runId)?.summary.status)).toEqual(['completed', 'completed', 'completed']);
    expect(manager.activeRunIds()).toEqual([]);
    expect(runtime.events.runsTracked).toBe(0);
    expect(approvals.list()).toEqual([]);
    expect(manager.detail(runIds[0] as string).events.some((event) => event.type === 'run.completed')).toBe(true);
    await manager.close();
  }, 120_000);

  it('answers a start once the run exists, its detail readable at once; a run its cluster cannot start is refused with why, and nothing is left running', async () => {
    const runtime = openRuntime();
    model = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'say hello' }]) : { content: 'hello' }) });
    const { manager } = managerFor(runtime, model.url);
    const { runId } = await manager.start({ goal: 'greet' }, NO_ASKER);
    expect(manager.detail(runId).run).toMatchObject({ id: runId, goal: 'greet' });

    const [closedPort] = await freePorts(1);
    const nowhere = `http://127.0.0.1:${closedPort}`;
    const clustered = managerFor(runtime, model.url, { runOptions: { cluster: { ingress: nowhere, admin: nowhere, secretFile: join(runtime.dataDir, 'no-secret') } } });
    const refused = await clustered.manager.start({ goal: 'greet on the cluster' }, NO_ASKER).catch((error: unknown) => error);
    expect(ArchonError.isInstance(refused) && refused.code).toBe('CLUSTER_UNREACHABLE');
    expect((refused as Error).message).toMatch(new RegExp(`^No Restate server answers at ${nowhere}/health\\.`));
    expect(clustered.manager.activeRunIds()).toEqual([]);
    expect(runtime.store.runs.listRuns(10).map((run) => run.goal)).toEqual(['greet']);

    // A start whose asker goes away (or the stop is pressed) before the run exists: it ends there, and never starts.
    const silent = createServer(() => undefined).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const hung = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const waiting = managerFor(runtime, model.url, { runOptions: { cluster: { ingress: hung, admin: hung, secretFile: join(runtime.dataDir, 'no-secret') } } });
    const asker = new AbortController();
    const started = waiting.manager.start({ goal: 'greet on a hung cluster' }, asker.signal).catch((error: unknown) => error);
    await expect.poll(() => waiting.manager.activeRunIds().length).toBe(1);
    asker.abort(new Error('the page went away'));
    expect(await started).toEqual(new Error('the page went away'));
    await expect.poll(() => waiting.manager.activeRunIds()).toEqual([]);
    expect(runtime.store.runs.listRuns(10).map((run) => run.goal)).toEqual(['greet']);
    silent.close();
    await manager.close();
    await clustered.manager.close();
    await waiting.manager.close();
  }, 120_000);

  it('says it is idle once the last of two overlapping runs has ended, not when the first one does', async () => {
    const runtime = openRuntime();
    model = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'say hello' }]) : { content: 'hello' }) });
    const told: string[] = [];
    let holding = true;
    const { manager, approveAll } = managerFor(runtime, model.url, { held: () => holding, onRunEnded: (runId) => told.push(runId), onIdle: () => told.push('idle') });
    const first = await manager.start({ goal: 'greet first' }, NO_ASKER);
    const second = await manager.start({ goal: 'greet second' }, NO_ASKER);
    holding = false;
    approveAll();
    await expect.poll(() => told.length, { timeout: 60_000 }).toBe(3);
    expect(told.slice(0, 2).sort()).toEqual([first.runId, second.runId].sort());
    expect(told[2]).toBe('idle');
    await manager.close();
  }, 120_000);
});
