import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { childProcessLauncher } from '../../../src/core/process/child-process-launcher';
import { clusterSecret, RestateCluster } from '../../../src/core/restate/restate-cluster';
import { stopHeldRun } from '../../../src/core/restate/run-log';
import type { ArchonRuntime } from '../../../src/core/runtime';
import { foldersHiddenFromTools } from '../../../src/core/tools/hidden-folders';
import { workerRunDriver } from '../../../src/hosts/node/worker-runs';
import { ArchonError } from '../../../src/shared/errors';
import { planReply, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { builtFile, PROJECT_ROOT } from '../../support/built';
import { useModelServers } from '../../support/model-servers';
import { useRestate } from '../../support/restate';
import { useRuntimes } from '../../support/runtime';
import { useTempDirs } from '../../support/temp-dir';

// A Restate server and a worker on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const tempDir = useTempDirs();
const restate = useRestate();
const serve = useModelServers();
const openRuntime = useRuntimes();

function noteOnce(request: RecordedRequest): ScriptedReply {
  if (request.purpose === 'plan') return planReply([{ id: 'note', description: 'Note that the desk is tidy' }]);
  return { content: 'The desk is tidy.' };
}

describe('where a worker goes on with a run the cluster holds', () => {
  it("goes on from its own record where the cluster's copy came from, takes the copy in where it has none, and refuses its own record once another data dir went on past it", async () => {
    const server = await restate.server();
    const secretFile = restate.secretFile();
    const workspace = tempDir();
    // This worker serves the run's log; the drives themselves are called here, as Restate would call them on two workers.
    await restate.worker(server, { id: 'w0', workspace, dataDir: tempDir(), secretFile });
    const model = await serve({ reply: noteOnce });
    const cluster = new RestateCluster({ ingress: server.ingress, admin: server.admin });
    const secret = clusterSecret(secretFile, workspace);
    const driverOn = (runtime: ArchonRuntime, id: string) =>
      workerRunDriver(runtime, { id, cluster, secret, workspace, workers: { launcher: childProcessLauncher, entry: builtFile('node/executor.js'), readableRoots: [PROJECT_ROOT], hiddenFolders: foldersHiddenFromTools(runtime.dataDir) } });
    const [first, second] = [openRuntime(), openRuntime()];
    const runId = randomUUID();
    const order = { order: { goal: 'note that the desk is tidy', approve: 'auto' as const, options: { modelUrl: model.url, workspace } }, scheduleId: null, firedAt: null };
    const drive = (runtime: ArchonRuntime, id: string) => driverOn(runtime, id).drive(runId, order, AbortSignal.timeout(60_000));

    expect(await drive(first, 'w1')).toBe('completed');
    const requests = model.requests.length;
    // Driven again where the copy came from: its own record, ended, is how it ended; nothing is asked again.
    expect(await drive(first, 'w1')).toBe('completed');
    // On a data dir without a record: the cluster's copy is taken in, whole.
    expect(await drive(second, 'w2')).toBe('completed');
    expect(model.requests.length).toBe(requests);
    expect(second.store.runs.events(runId)).toEqual(first.store.runs.events(runId));
    expect(second.store.runs.getRun(runId)?.summary).toEqual(first.store.runs.getRun(runId)?.summary);
    // The copy now came from the second data dir: the first does not go on from its own record, which could be behind it.
    const refused = await drive(first, 'w1').then(
      () => null,
      (error: unknown) => error,
    );
    expect(ArchonError.isInstance(refused) && refused.code).toBe('RUN_LEASED');
    expect((refused as Error).message).toMatch(new RegExp(`^Run ${runId} went on on another data dir after ${first.dataDir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}'s record of it \\(worker w2 held it last\\); worker w1 does not go on from its older record`));

    // A stop asked before any worker takes a run: the worker that takes it stops it, naming who asked.
    const stoppedId = randomUUID();
    await stopHeldRun(cluster, secret, stoppedId, 'the operator (archon stop)', AbortSignal.timeout(30_000));
    expect(await driverOn(second, 'w2').drive(stoppedId, order, AbortSignal.timeout(60_000))).toBe('stopped');
    expect(second.store.runs.events(stoppedId).flatMap((event) => (event.type === 'run.stopped' ? [event.reason] : []))).toEqual([expect.stringContaining('Stopped by the operator (archon stop)')]);
  });
});
