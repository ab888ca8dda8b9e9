import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { planReply, stepIdOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon, type CliResult } from '../../support/archon-process';
import { useModelServers } from '../../support/model-servers';
import { canMountSmallDisk, fillDisk, useSmallDisk } from '../../support/small-disk';

const serve = useModelServers();

/** Far beyond what a run of this size takes even on a loaded machine: reaching it is a hang, not slowness. */
const HANG_MS = 90_000;

type Moment = 'after run.started' | 'as a step result is kept' | 'at the plan request' | 'mid-step' | "at a tool's write" | 'before the final answer';

/** Two steps, each writing a file with write_file, then answering; the test fills the disk when `moment` comes. */
function scenario(fillAt: (request: RecordedRequest, turn: number) => void) {
  return (request: RecordedRequest): ScriptedReply => {
    const turn = (request.body.messages ?? []).filter((message) => message.role === 'assistant').length;
    fillAt(request, turn);
    if (request.purpose === 'plan') return planReply([{ id: 'one', description: 'write note one' }, { id: 'two', description: 'write note two', dependencies: ['one'] }]);
    if (request.purpose === 'final') return { content: 'both notes written' };
    const step = stepIdOf(request) ?? '?';
    return turn === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: `${step}.txt`, content: `note ${step}` } }] } : { content: `wrote ${step}.txt` };
  };
}

function isMoment(moment: Moment, request: RecordedRequest, turn: number): boolean {
  switch (moment) {
    case 'at the plan request':
      return request.purpose === 'plan';
    case 'mid-step':
      return request.purpose === 'step' && stepIdOf(request) === 'two' && turn === 1;
    case "at a tool's write":
      return request.purpose === 'step' && stepIdOf(request) === 'two' && turn === 0;
    case 'before the final answer':
      return request.purpose === 'final';
    default:
      return false;
  }
}

/** The CLI to its end, or killed (and reported as hung) after HANG_MS. */
async function finished(started: ReturnType<typeof spawnArchon>): Promise<CliResult & { hung: boolean }> {
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    started.child.kill('SIGKILL');
  }, HANG_MS);
  const result = await started.done;
  clearTimeout(timer);
  return { ...result, hung };
}

function expectPausedForDisk(result: CliResult & { hung: boolean }): void {
  expect(result.hung, 'the process hung on the full disk').toBe(false);
  expect(result.status, result.stderr).toBe(6);
  expect(result.stderr).toMatch(/The disk holding Archon's data is full or failing \(.*\)\. Free some space, then resume the run\./);
  expect(result.stderr).not.toMatch(/Unhandled|ENOSPC: no space left on device, write\n|TypeError|at .*\.js:\d+/);
  expect(result.stderr.match(/archon\.log cannot be written/g)?.length ?? 0).toBeLessThanOrEqual(1);
}

// Filling a real disk needs a tmpfs of its own, which only root (or CAP_SYS_ADMIN) may mount.
describe.skipIf(!canMountSmallDisk())('a full disk pauses a run (exit 6); resume completes once space is freed', () => {
  const disk = useSmallDisk('16m');
  /** Folders and fillers on the small disk, removed after each test so the next one starts with room. */
  const leftovers: string[] = [];
  afterEach(() => {
    for (const path of leftovers.splice(0)) rmSync(path, { recursive: true, force: true });
  });
  const folderOnDisk = (name: string) => {
    const folder = join(disk(), `${name}-${leftovers.length}`);
    mkdirSync(folder);
    leftovers.push(folder);
    return folder;
  };
  const fillOnce = () => {
    let filler: string | null = null;
    return {
      fill: () => {
        if (filler !== null) return;
        filler = fillDisk(disk());
        leftovers.push(filler);
      },
      free: () => {
        expect(filler, 'the moment came').not.toBeNull();
        rmSync(filler as string);
      },
    };
  };
  const flagsFor = (url: string, dataDir: string, workspace: string) => ['--model-url', url, '--data-dir', dataDir, '--workspace', workspace, '--policy', 'permissive', '--approve', 'auto', '--json'];
  const archon = (args: string[]) => spawnArchon(args, { OPENAI_API_KEY: '' });

  const moments: Moment[] = ['after run.started', 'at the plan request', 'mid-step', "at a tool's write", 'as a step result is kept', 'before the final answer'];
  it.each(moments)('the disk fills %s', { timeout: 3 * HANG_MS }, async (moment) => {
    const dataDir = folderOnDisk('data');
    const filler = fillOnce();
    let armed = false;
    const server = await serve({ reply: scenario((request, turn) => armed && isMoment(moment, request, turn) && filler.fill()) });
    // An earlier run leaves memories the next one recalls, embeds and touches: writes a full disk refuses and Archon only logs.
    const earlier = await finished(archon(['run', 'write two notes first', ...flagsFor(server.url, dataDir, folderOnDisk('earlier'))]));
    expect(earlier.status, earlier.stderr).toBe(0);

    armed = true;
    const workspace = folderOnDisk('workspace');
    const flags = flagsFor(server.url, dataDir, workspace);
    const run = archon(['run', 'write two notes', ...flags]);
    const seen = { runId: '' };
    run.child.stdout?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      seen.runId ||= /"type":"run\.started","runId":"([^"]+)"/.exec(text)?.[1] ?? '';
      if (moment === 'after run.started' && seen.runId) filler.fill();
      if (moment === 'as a step result is kept' && text.includes('"type":"step.completed"')) filler.fill();
    });
    expectPausedForDisk(await finished(run));

    filler.free();
    const resumed = await finished(archon(['resume', seen.runId, ...flags]));
    expect(resumed.hung, 'the resume hung').toBe(false);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('"type":"run.completed"');
    expect(['one', 'two'].map((step) => readFileSync(join(workspace, `${step}.txt`), 'utf8'))).toEqual(['note one', 'note two']);
  });

  it('a disk full before `archon run` starts: exit 6 with the same advice, and the goal runs once space is freed', { timeout: 3 * HANG_MS }, async () => {
    const [dataDir, workspace] = [folderOnDisk('data'), folderOnDisk('workspace')];
    ArchonStore.open(dataDir).close();
    const server = await serve({ reply: scenario(() => undefined) });
    const filler = fillOnce();
    filler.fill();
    expectPausedForDisk(await finished(archon(['run', 'write two notes', ...flagsFor(server.url, dataDir, workspace)])));
    expect(server.chatRequests).toHaveLength(0);

    filler.free();
    const again = await finished(archon(['run', 'write two notes', ...flagsFor(server.url, dataDir, workspace)]));
    expect(again.status, again.stderr).toBe(0);
    expect(readFileSync(join(workspace, 'two.txt'), 'utf8')).toBe('note two');
  });
});
