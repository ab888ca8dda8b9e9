import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { clusterSecret } from '../../../src/core/restate/restate-cluster';
import { signed } from '../../../src/core/restate/signed';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { describe, expect, it, vi } from 'vitest';
import { planReply, stepIdOf, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { eventsOf, runArchon, spawnArchon, spawnArchonAnswering } from '../../support/archon-process';
import { useModelServers } from '../../support/model-servers';
import { processesMatching, uniqueSleepSeconds } from '../../support/processes';
import { freePorts, until, useRestate, type ArchonWorker, type RestateServer } from '../../support/restate';
import { useTempDirs } from '../../support/temp-dir';

// A Restate server, workers, a run and a kill on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 180_000 });
const tempDir = useTempDirs();
const serve = useModelServers();
const restate = useRestate();

const WIDTH = 8;
const marks = Array.from({ length: WIDTH }, (_, index) => `mark-${index + 1}`);

/** Each step notes that its command started, waits until every command has (so a kill then finds them all in flight), waits, then appends its mark. */
const command = (mark: string, seconds: number | string) => `echo ${mark} >> starts.txt; until [ $(wc -l < starts.txt) -ge ${WIDTH} ]; do sleep 0.1; done; sleep ${seconds}; echo ${mark} >> ledger.txt`;

/** A plan of WIDTH independent steps; each step runs its command, then reports. */
function fanOut(seconds: number | string): (request: RecordedRequest) => ScriptedReply {
  return (request) => {
    if (request.purpose === 'plan') return planReply(marks.map((mark) => ({ id: mark, description: `Append ${mark} to the ledger`, expected_output: 'the command ran' })));
    if (request.purpose === 'final') return { content: 'Every mark is in the ledger.' };
    const id = stepIdOf(request) ?? '?';
    const answered = request.body.messages?.at(-1)?.role === 'tool';
    return answered ? { content: `${id} is in the ledger.` } : { toolCalls: [{ name: 'run_command', arguments: { command: command(id, seconds) } }] };
  };
}

function lines(workspace: string, file: string): string[] {
  const path = join(workspace, file);
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
}

/** The one run of a data dir. */
function runIdIn(dataDir: string): string {
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    return (db.prepare('SELECT id FROM runs').get() as { id: string }).id;
  } finally {
    db.close();
  }
}

/** The worker each of the run's tool calls ran on, from the run's journal. */
function workersOf(dataDir: string): string[] {
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    const rows = db.prepare("SELECT result_json AS result FROM tool_calls WHERE tool = 'run_command' AND result_json IS NOT NULL").all() as { result: string }[];
    return rows.map((row) => String((JSON.parse(row.result) as { metadata: { worker?: string } }).metadata.worker));
  } finally {
    db.close();
  }
}

function runFlags(server: ScriptedModelServer, cluster: Pick<RestateServer, 'ingress' | 'admin'>, dataDir: string, workspace: string, secretFile: string): string[] {
  return ['--cluster-secret-file', secretFile, '--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--policy', 'permissive', '--approve', 'prompt', '--concurrency', String(WIDTH), '--json', '--engine', 'restate', '--restate-ingress', cluster.ingress, '--restate-admin', cluster.admin];
}

/** A Restate server and two workers behind one balancer, serving one workspace. */
async function twoWorkers(serverSettings: Record<string, string> = {}) {
  const cluster = await restate.server(serverSettings);
  const secretFile = restate.secretFile();
  const workspace = tempDir();
  const workers = await restate.balanced(cluster, { workspace, secretFile, dataDirs: [tempDir(), tempDir()] });
  // The operator answers yes to every approval, a call that may already have happened run again included.
  const run = (server: ScriptedModelServer, dataDir: string) => spawnArchonAnswering(['run', 'Append every mark to the ledger', ...runFlags(server, cluster, dataDir, workspace, secretFile)], () => true, { OPENAI_API_KEY: '' });
  return { cluster, workspace, workers, run, secretFile };
}

/** What went wrong, from a run's events, for an assertion's message. */
const troubles = (stdout: string) => stdout.split('\n').filter((line) => /"(step\.failed|run\.failed|run\.stopped)"/.test(line)).join('\n');

describe('archon worker and run --engine restate (a real Restate server)', () => {
  it('runs an 8-wide fan-out on two workers; one killed with kill -9 mid-run, the run completes with each mark once and the audit log intact', async () => {
    const { workspace, workers, run } = await twoWorkers();
    const [first, second] = workers as [ArchonWorker, ArchonWorker];

    // Undisturbed, the calls spread over both workers.
    const calm = tempDir();
    const spread = await run(await serve({ reply: fanOut(0) }), calm).done;
    expect(spread.status, troubles(spread.stdout)).toBe(0);
    expect(new Set(workersOf(calm))).toEqual(new Set([first.id, second.id]));
    expect(new Set(eventsOf(spread.stdout).flatMap((event) => (event.type === 'tool.completed' ? [event.worker] : [])))).toEqual(new Set([first.id, second.id]));
    expect(lines(workspace, 'ledger.txt').sort()).toEqual([...marks].sort());

    rmSync(join(workspace, 'ledger.txt'));
    rmSync(join(workspace, 'starts.txt'));
    const dataDir = tempDir();
    const disturbed = run(await serve({ reply: fanOut(3) }), dataDir);
    await until(() => lines(workspace, 'starts.txt').length >= WIDTH, 'every command has started');
    first.child.kill('SIGKILL');
    const result = await disturbed.done;
    expect(result.status, troubles(result.stdout)).toBe(0);
    expect(lines(workspace, 'ledger.txt').sort()).toEqual([...marks].sort());
    const events = eventsOf(result.stdout);
    expect(events.filter((event) => event.type === 'step.completed')).toHaveLength(WIDTH);
    // The killed worker's commands began and may have happened: each ran again only on the operator's word, once.
    const uncertain = new Set(events.flatMap((event) => (event.type === 'approval.requested' && event.kind === 'uncertain_repeat' ? [event.approvalId] : [])));
    expect(uncertain.size).toBeGreaterThan(0);
    expect(events.flatMap((event) => (event.type === 'approval.resolved' && uncertain.has(event.approvalId) ? [event.decidedBy] : []))).toEqual([...uncertain].map(() => 'operator'));
    expect(lines(workspace, 'starts.txt')).toHaveLength(WIDTH + uncertain.size);
    const verify = runArchon(['audit', 'verify', '--data-dir', dataDir]);
    expect(verify.status, verify.stdout).toBe(0);
  });

  it('a worker stopped with SIGTERM mid-run lets its calls finish: the run completes, nothing is asked again, each mark once', async () => {
    const { workspace, workers, run } = await twoWorkers();
    const [first] = workers as [ArchonWorker, ArchonWorker];
    const dataDir = tempDir();
    const running = run(await serve({ reply: fanOut(2) }), dataDir);
    await until(() => lines(workspace, 'starts.txt').length >= WIDTH, 'every command has started');
    const stopped = new Promise((done) => first.child.once('exit', done));
    first.child.kill('SIGTERM');
    const result = await running.done;
    expect(result.status, troubles(result.stdout)).toBe(0);
    expect(await stopped).toBe(0);
    expect(eventsOf(result.stdout).filter((event) => event.type === 'approval.requested' && event.kind === 'uncertain_repeat')).toEqual([]);
    expect(lines(workspace, 'starts.txt')).toHaveLength(WIDTH);
    expect(lines(workspace, 'ledger.txt').sort()).toEqual([...marks].sort());
  });

  it('the Restate server killed with kill -9 and restarted mid-run: the run completes, no mark twice', async () => {
    const { cluster, workspace, run } = await twoWorkers();
    const dataDir = tempDir();
    const running = run(await serve({ reply: fanOut(3) }), dataDir);
    await until(() => lines(workspace, 'starts.txt').length >= WIDTH, 'every command has started');
    await cluster.restart();
    const result = await running.done;
    expect(result.status, troubles(result.stdout)).toBe(0);
    expect(lines(workspace, 'ledger.txt').sort()).toEqual([...marks].sort());
    expect(eventsOf(result.stdout).filter((event) => event.type === 'step.completed')).toHaveLength(WIDTH);
  });

  it('the desk killed with kill -9 while its calls run: resume fetches their results and runs none again', async () => {
    const { cluster, workspace, run, secretFile } = await twoWorkers();
    const server = await serve({ reply: fanOut(2) });
    const dataDir = tempDir();
    const first = run(server, dataDir);
    await until(() => lines(workspace, 'starts.txt').length >= WIDTH, 'every command has started');
    first.child.kill('SIGKILL');
    await first.done;
    // The workers finish what they began without the desk.
    await until(() => lines(workspace, 'ledger.txt').length >= WIDTH, 'every command has finished');
    const runId = runIdIn(dataDir);
    const resumed = await spawnArchon(['resume', runId, '--data-dir', dataDir, '--approve', 'auto', '--json', '--engine', 'restate', '--restate-ingress', cluster.ingress, '--restate-admin', cluster.admin, '--cluster-secret-file', secretFile], { OPENAI_API_KEY: '' }).done;
    expect(resumed.status, troubles(resumed.stdout)).toBe(0);
    expect(lines(workspace, 'starts.txt')).toHaveLength(WIDTH);
    expect(lines(workspace, 'ledger.txt').sort()).toEqual([...marks].sort());
    expect(eventsOf(resumed.stdout).filter((event) => event.type === 'approval.requested' && event.kind === 'uncertain_repeat')).toEqual([]);
  });

  it('a call longer than the server allows an attempt to say nothing still runs once, to its end', async () => {
    const { workspace, run } = await twoWorkers({ RESTATE_WORKER__INVOKER__INACTIVITY_TIMEOUT: '2s', RESTATE_WORKER__INVOKER__ABORT_TIMEOUT: '2s' });
    const dataDir = tempDir();
    const result = await run(await serve({ reply: fanOut(6) }), dataDir).done;
    expect(result.status, troubles(result.stdout)).toBe(0);
    expect(lines(workspace, 'starts.txt')).toHaveLength(WIDTH);
    expect(lines(workspace, 'ledger.txt').sort()).toEqual([...marks].sort());
  });

  it('a run interrupted on this machine and resumed on the cluster asks before it runs an interrupted call there', async () => {
    const { cluster, workspace, secretFile } = await twoWorkers();
    const server = await serve({ reply: fanOut(2) });
    const dataDir = tempDir();
    const local = spawnArchon(['run', 'Append every mark to the ledger', '--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--policy', 'permissive', '--approve', 'auto', '--concurrency', String(WIDTH), '--json'], { OPENAI_API_KEY: '' });
    await until(() => lines(workspace, 'starts.txt').length >= WIDTH, 'every command has started');
    local.child.kill('SIGKILL');
    await local.done;
    const resumed = await spawnArchon(['resume', runIdIn(dataDir), '--data-dir', dataDir, '--approve', 'auto', '--json', '--engine', 'restate', '--restate-ingress', cluster.ingress, '--restate-admin', cluster.admin, '--cluster-secret-file', secretFile], { OPENAI_API_KEY: '' }).done;
    const asked = eventsOf(resumed.stdout).filter((event) => event.type === 'approval.requested' && event.kind === 'uncertain_repeat');
    expect(asked).toHaveLength(WIDTH);
    // Not one interrupted command ran again: --approve auto never repeats one.
    expect(lines(workspace, 'starts.txt')).toHaveLength(WIDTH);
  });

  it('the emergency stop from the desk ends the run and every call on the workers, and leaves no tool process', async () => {
    const { workspace, run } = await twoWorkers();
    const seconds = uniqueSleepSeconds();
    const dataDir = tempDir();
    const running = run(await serve({ reply: fanOut(seconds) }), dataDir);
    await until(() => lines(workspace, 'starts.txt').length >= WIDTH, 'every command has started');
    expect(processesMatching(`sleep ${seconds}`).length).toBeGreaterThanOrEqual(WIDTH);
    const stop = runArchon(['estop', '--data-dir', dataDir]);
    expect(stop.status, stop.stderr).toBe(0);
    const result = await running.done;
    expect(result.status, troubles(result.stdout)).toBe(3);
    await until(() => processesMatching(`sleep ${seconds}`).length === 0, 'no command of the run is left');
    expect(lines(workspace, 'ledger.txt')).toEqual([]);
  });

  it('a call sent to the cluster without the secret is refused by the worker, and runs nothing; nor can a mark sent without it make a call look begun', async () => {
    const { cluster, workspace, secretFile } = await twoWorkers();
    const post = (target: string, key: string, body: unknown) => fetch(`${cluster.ingress}/${target}`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body) });
    const forged = { tool: 'run_command', args: { command: 'echo forged >> ledger.txt' }, timeoutMs: 10_000, signature: '0'.repeat(64) };
    const answer = await post('ArchonTools/forged-1/call', 'forged-1', forged);
    expect(answer.ok).toBe(false);
    expect(await answer.text()).toContain("not signed with this cluster's secret under its key");
    expect(lines(workspace, 'ledger.txt')).toEqual([]);

    // A mark set ahead of a call would make the call report that it may already have happened, and not run.
    for (const body of [null, { signature: '0'.repeat(64) }]) {
      const mark = await post('ArchonCallMarks/call-1/begin', `mark-${JSON.stringify(body)}`, body);
      expect(mark.ok).toBe(false);
      expect(await mark.text()).toMatch(/Refused: (not a mark|a mark not signed with this cluster's secret)/);
    }
    const call = { tool: 'run_command', args: { command: 'echo signed >> ledger.txt' }, timeoutMs: 10_000 };
    const result = await post('ArchonTools/call-1/call', 'call-1', signed(clusterSecret(secretFile, workspace), 'ArchonTools/call', 'call-1', call));
    expect(result.ok, await result.clone().text()).toBe(true);
    expect(await result.json()).toMatchObject({ status: 'success' });
    expect(lines(workspace, 'ledger.txt')).toEqual(['signed']);
  });

  it('a worker without a secret, with its secret file in the workspace, on every interface without --advertise, or with the sandbox off, does not start', async () => {
    const cluster = await restate.server();
    const workspace = tempDir();
    const missing = runArchon(['worker', '--workspace', workspace, '--data-dir', tempDir(), '--restate-ingress', cluster.ingress, '--restate-admin', cluster.admin]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('archon worker needs --cluster-secret-file');
    const inside = join(workspace, 'cluster-secret');
    writeFileSync(inside, 'a'.repeat(64));
    const exposed = runArchon(['worker', '--workspace', workspace, '--data-dir', tempDir(), '--cluster-secret-file', inside, '--restate-ingress', cluster.ingress, '--restate-admin', cluster.admin]);
    expect(exposed.status).toBe(2);
    expect(exposed.stderr).toContain(`The cluster secret file ${inside} is inside the workspace`);
    const everywhere = runArchon(['worker', '--host', '0.0.0.0', '--workspace', workspace, '--data-dir', tempDir(), '--cluster-secret-file', restate.secretFile(), '--restate-ingress', cluster.ingress, '--restate-admin', cluster.admin]);
    expect(everywhere.status).toBe(2);
    expect(everywhere.stderr).toContain('pass --advertise with its address as the Restate server sees it');
    const unconfined = tempDir();
    const store = ArchonStore.open(unconfined);
    store.updateSettings({ sandbox: 'off' });
    store.close();
    const bare = runArchon(['worker', '--workspace', workspace, '--data-dir', unconfined, '--cluster-secret-file', restate.secretFile(), '--restate-ingress', cluster.ingress, '--restate-admin', cluster.admin]);
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain('The OS sandbox is off');
  });

  it('a run on a cluster nobody serves is refused at once, saying what to start; cluster flags without --engine restate are refused', async () => {
    const server = await serve({ reply: fanOut(0) });
    const [dataDir, workspace] = [tempDir(), tempDir()];
    const [port] = (await freePorts(1)) as [number];
    const cluster = { ingress: `http://127.0.0.1:${port}`, admin: `http://127.0.0.1:${port}` };
    const result = await spawnArchon(['run', 'Append every mark to the ledger', ...runFlags(server, cluster, dataDir, workspace, restate.secretFile())], { OPENAI_API_KEY: '' }).done;
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`No Restate server answers at http://127.0.0.1:${port}/health. Start one (npx restate-server)`);
    const engineless = runArchon(['run', 'Append every mark to the ledger', '--data-dir', dataDir, '--workspace', workspace, '--restate-ingress', cluster.ingress]);
    expect(engineless.status).toBe(2);
    expect(engineless.stderr).toContain('go with --engine restate');
  });
});
