import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { LEASE_STALE_MS, leaseRun, leaseRunWhenFree } from '../../../src/core/run/run-lease';
import { ArchonError } from '../../../src/shared/errors';
import type { RunOptions } from '../../../src/shared/schemas/run';
import { planReply, requestText, stepIdOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine, type EngineHarness } from '../../support/engine';
import { useRuntimes } from '../../support/runtime';

const startEngine = useEngine();
const openRuntime = useRuntimes();

/** Live processes that stand for another Archon process holding a lease; killed after each test. */
const holders: ChildProcess[] = [];
afterEach(() => {
  for (const holder of holders.splice(0)) holder.kill('SIGKILL');
});

function otherProcess(): { pid: number; exit(): Promise<void> } {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  holders.push(child);
  return {
    pid: child.pid as number,
    exit: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

const OPTIONS: RunOptions = { modelUrl: 'http://127.0.0.1:1/v1', model: '', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: '/tmp', maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 };

describe('one process drives a run tree', () => {
  function tree() {
    const runs = openRuntime().store.runs;
    const now = new Date().toISOString();
    runs.createRun({ id: 'parent', goal: 'g', policy: 'balanced', options: OPTIONS, now });
    runs.createRun({ id: 'child', goal: 'sub', policy: 'balanced', options: { ...OPTIONS, parentRunId: 'parent', parentStepId: 's', depth: 1 }, now });
    runs.createRun({ id: 'grandchild', goal: 'subsub', policy: 'balanced', options: { ...OPTIONS, parentRunId: 'child', parentStepId: 't', depth: 2 }, now });
    return runs;
  }

  it("refuses a sub-agent's run while another live process drives a run above it, naming that process and that run", () => {
    const runs = tree();
    const other = otherProcess();
    expect(runs.acquireLease('parent', other.pid, Date.now(), LEASE_STALE_MS, () => true)).toEqual({ ok: true });
    for (const id of ['child', 'grandchild']) {
      expect(() => leaseRun(runs, id)).toThrow(expect.objectContaining({ code: 'RUN_LEASED', message: expect.stringMatching(new RegExp(`^Run ${id} belongs to the same run tree .* as run parent, .*another Archon process \\(PID ${other.pid}\\).*\`archon stop parent\``)) }));
    }
  });

  it('refuses a parent while another live process drives one of its sub-agents; the same process may take the whole tree', () => {
    const runs = tree();
    const other = otherProcess();
    runs.acquireLease('grandchild', other.pid, Date.now(), LEASE_STALE_MS, () => true);
    expect(() => leaseRun(runs, 'parent')).toThrow(expect.objectContaining({ code: 'RUN_LEASED', details: { pid: other.pid, runId: 'grandchild' } }));
    runs.releaseLease('grandchild', other.pid);
    const leases = ['parent', 'child', 'grandchild'].map((id) => leaseRun(runs, id));
    for (const lease of leases) lease.release();
  });

  it('waits for a lease held elsewhere: taken once the holder is gone, given up after the bound, ended at once by a stop', async () => {
    const runs = tree();
    const other = otherProcess();
    runs.acquireLease('child', other.pid, Date.now(), LEASE_STALE_MS, () => true);
    await expect(leaseRunWhenFree(runs, 'child', new AbortController().signal, 0)).rejects.toMatchObject({ code: 'RUN_LEASED', details: { pid: other.pid } });
    const stop = new AbortController();
    const stopped = leaseRunWhenFree(runs, 'child', stop.signal);
    stop.abort(new ArchonError('CANCELLED', 'Stopped.'));
    await expect(stopped).rejects.toMatchObject({ code: 'CANCELLED' });
    const waiting = leaseRunWhenFree(runs, 'child', new AbortController().signal);
    await other.exit();
    (await waiting).release();
  });
});

const PARENT_GOAL = 'Write a short report on the capital of France';
const SUB_GOAL = 'Find the capital of France';
const CHILD_ANSWER = 'The capital of France is Paris (sub-agent).';
const isChild = (request: RecordedRequest) => /^Goal: Find the capital of France$/m.test(requestText(request));

/**
 * A parent whose sub-agent step's child was stopped mid-step; on resume, another live process takes
 * the child's lease after the parent took its own (as a resume of the child alone that slipped past
 * the parent's check would). `release` says what the test does once the parent is at the child.
 */
async function parentMeetingAChildLeasedElsewhere(release: (engine: EngineHarness, holder: { exit(): Promise<void> }, stop: AbortController) => Promise<void>) {
  const firstStop = new AbortController();
  let stopOnce = true;
  const engine = await startEngine({
    reply: (request): ScriptedReply => {
      if (request.purpose === 'plan') {
        return isChild(request) ? planReply([{ id: 'lookup', description: 'Look up the capital' }]) : planReply([{ id: 'research', kind: 'subagent', goal: SUB_GOAL }, { id: 'report', description: 'Write the report', dependencies: ['research'] }]);
      }
      if (request.purpose === 'replan') return planReply([{ id: 'research2', kind: 'subagent', goal: SUB_GOAL }, { id: 'report', description: 'Write the report', dependencies: ['research2'] }]);
      if (request.purpose === 'final') return { content: isChild(request) ? CHILD_ANSWER : 'Report: Paris.' };
      if (stepIdOf(request) === 'lookup' && stopOnce) {
        stopOnce = false;
        firstStop.abort(new ArchonError('CANCELLED', 'Stopped by the operator.'));
        return { hang: true };
      }
      return { content: `result of ${stepIdOf(request) ?? '?'}` };
    },
  });
  const first = await engine.run(PARENT_GOAL, {}, firstStop.signal);
  expect(first.status).toBe('stopped');
  const child = engine.runtime.store.runs.childRun(first.runId, 'research');
  const holder = otherProcess();
  const unsubscribe = engine.runtime.bus.subscribe((event) => {
    if (!('runId' in event) || event.runId !== first.runId || event.type !== 'run.resumed') return;
    const db = new Database(join(engine.runtime.dataDir, 'archon.db'));
    db.prepare('UPDATE runs SET lease_pid = ?, lease_heartbeat_ms = ? WHERE id = ?').run(holder.pid, Date.now(), child?.id);
    db.close();
  });
  const stop = new AbortController();
  const resumed = engine.resume(first.runId, stop.signal);
  await expect.poll(() => engine.runtime.store.runs.getSteps(first.runId).find((step) => step.spec.id === 'research')?.status, { timeout: 20_000 }).toBe('running');
  await release(engine, holder, stop);
  const result = await resumed;
  unsubscribe();
  return { engine, result, childId: child?.id as string };
}

describe('a parent meeting its sub-agent run driven by another process', () => {
  it('waits for that process to end, then continues the same child: no step failure, no re-plan, no second child', async () => {
    const { engine, result, childId } = await parentMeetingAChildLeasedElsewhere((_engine, holder) => holder.exit());
    expect(result.status, result.error ?? '').toBe('completed');
    const runs = engine.runtime.store.runs;
    expect(runs.listRuns(10).filter((run) => run.parentRunId === result.runId).map((run) => [run.id, run.status])).toEqual([[childId, 'completed']]);
    expect(engine.events.filter((event) => event.type === 'step.failed')).toEqual([]);
    expect(engine.server.chatRequests.filter((request) => request.purpose === 'replan')).toHaveLength(0);
    expect(engine.server.chatRequests.filter((request) => stepIdOf(request) === 'lookup')).toHaveLength(2);
  });

  it('a stop while it waits ends the wait at once: the run ends stopped, its sub-agent step stopped, not failed', async () => {
    const { engine, result } = await parentMeetingAChildLeasedElsewhere(async (_engine, _holder, stop) => stop.abort(new ArchonError('CANCELLED', 'Stopped by the operator.')));
    expect(result.status).toBe('stopped');
    expect(engine.runtime.store.runs.getSteps(result.runId).find((step) => step.spec.id === 'research')?.status).toBe('stopped');
    expect(engine.events.filter((event) => event.type === 'step.failed')).toEqual([]);
    expect(engine.server.chatRequests.filter((request) => request.purpose === 'replan')).toHaveLength(0);
  });
});
