import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import type { ApprovalDecision, ApprovalRequest } from '../../../src/shared/schemas/approval';
import type { StartRunInput } from '../../../src/shared/schemas/run-detail';
import { planReply, startModelServer, stepIdOf, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon, useServe, type ServeProcess } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

// Two real processes one after the other on a loaded machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 90_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const models: ScriptedModelServer[] = [];
afterEach(async () => {
  await Promise.all(models.splice(0).map((model) => model.close()));
});

const assistantTurns = (request: RecordedRequest) => (request.body.messages ?? []).filter((message) => message.role === 'assistant').length;

/**
 * One step that writes `one.txt`, then (the reply the first process never gets: it hangs until the kill) `two.txt`,
 * then answers. The reply follows from the recorded conversation, as a real model's would, so the resumed step goes on.
 */
function twoWrites(killed: () => boolean) {
  return (request: RecordedRequest): ScriptedReply => {
    if (request.purpose === 'plan') return planReply([{ id: 'a', description: 'write two notes' }]);
    if (request.purpose !== 'step' || stepIdOf(request) !== 'a') return { content: 'two notes written' };
    const turns = assistantTurns(request);
    if (turns === 0) return { toolCalls: [{ name: 'write_file', arguments: { path: 'one.txt', content: 'one' } }] };
    if (turns === 1 && !killed()) return { hang: true };
    if (turns === 1) return { toolCalls: [{ name: 'write_file', arguments: { path: 'two.txt', content: 'two' } }] };
    return { content: 'two notes written' };
  };
}

interface Operator {
  call<T>(command: string, input?: unknown): Promise<T>;
  close(): void;
}

/** The app's side of `archon serve`: commands over its WebSocket, as the renderer sends them. */
async function connect(serve: ServeProcess): Promise<Operator> {
  const ws = new WebSocket(`ws://127.0.0.1:${serve.url.port}/ws`, ['archon', `archon-token.${serve.token}`], { origin: serve.origin });
  const waiting = new Map<number, (frame: { ok: boolean; value?: unknown; error?: { message: string } }) => void>();
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { id?: number; result?: { ok: boolean; value?: unknown; error?: { message: string } } };
    if (frame.id !== undefined && frame.result) waiting.get(frame.id)?.(frame.result);
  });
  ws.on('error', () => undefined);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let nextId = 1;
  return {
    call: <T>(command: string, input: unknown = {}) =>
      new Promise<T>((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, (result) => (result.ok ? resolve(result.value as T) : reject(new Error(`${command}: ${result.error?.message}`))));
        ws.send(JSON.stringify({ id, command, input }));
      }),
    close: () => ws.close(),
  };
}

/** Answers the run's requests in the app as `answer` says, until `done` holds. */
async function answerUntil(operator: Operator, answer: (request: ApprovalRequest) => ApprovalDecision, done: () => boolean): Promise<void> {
  const answered = new Set<string>();
  await expect
    .poll(
      async () => {
        for (const request of await operator.call<ApprovalRequest[]>('approvals.list')) {
          if (answered.has(request.id)) continue;
          answered.add(request.id);
          await operator.call('approvals.decide', { approvalId: request.id, actionHash: request.actionHash, decision: answer(request) });
        }
        return done();
      },
      { timeout: 60_000, interval: 100 },
    )
    .toBe(true);
}

interface Crashed {
  dataDir: string;
  workspace: string;
  modelUrl: string;
  runId: string;
}

/**
 * Runs the goal in `archon serve`, answering in the app as `answer` says, until the step has written one.txt and waits
 * for its next reply; then the host is killed with SIGKILL.
 */
async function runUntilKilled(start: Omit<StartRunInput, 'goal'>, answer: (request: ApprovalRequest) => ApprovalDecision): Promise<Crashed> {
  let killed = false;
  const model = await startModelServer({ reply: twoWrites(() => killed) });
  models.push(model);
  const [dataDir, workspace] = [tempDir(), tempDir()];
  const serve = await startServe(dataDir, ['--model-url', model.url, '--workspace', workspace]);
  const operator = await connect(serve);
  const { runId } = await operator.call<{ runId: string }>('runs.start', { goal: 'write two notes', ...start });
  await answerUntil(operator, answer, () => model.chatRequests.some((request) => stepIdOf(request) === 'a' && assistantTurns(request) === 1));
  operator.close();
  const exited = new Promise((resolve) => serve.child.once('exit', resolve));
  killed = true;
  serve.child.kill('SIGKILL');
  await exited;
  expect(readFileSync(join(workspace, 'one.txt'), 'utf8')).toBe('one');
  return { dataDir, workspace, modelUrl: model.url, runId };
}

/** `archon resume` in a fresh process, answering by rule: `--approve auto` approves what is asked and never raises a budget. */
function resume(crashed: Crashed, flags: string[] = []) {
  return spawnArchon(['resume', crashed.runId, '--data-dir', crashed.dataDir, '--model-url', crashed.modelUrl, '--workspace', crashed.workspace, '--approve', 'auto', ...flags]).done;
}

function readDb<T>(dataDir: string, read: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

const approve = (request: ApprovalRequest): ApprovalDecision => (request.kind === 'tool_call' ? { verdict: 'approve', scope: 'run_tool' } : { verdict: 'approve' });

describe('a run killed with SIGKILL and resumed in a fresh process keeps what the operator decided', () => {
  it('"allow all like this for this run": the next write after the resume runs without asking', async () => {
    const crashed = await runUntilKilled({ policy: 'balanced' }, approve);
    const result = await resume(crashed);
    expect(result.status, result.stderr).toBe(0);
    expect(readFileSync(join(crashed.workspace, 'two.txt'), 'utf8')).toBe('two');
    const { asked, calls } = readDb(crashed.dataDir, (db) => ({
      asked: db.prepare("SELECT count(*) AS n FROM approvals WHERE kind = 'tool_call'").get() as { n: number },
      calls: db.prepare("SELECT json_extract(args_json, '$.path') AS path, allowed_by AS allowedBy FROM tool_calls ORDER BY started_at").all(),
    }));
    expect(asked.n).toBe(1);
    expect(calls).toEqual([
      { path: 'one.txt', allowedBy: 'approval' },
      { path: 'two.txt', allowedBy: 'grant' },
    ]);
  });

  it('a budget cap raised in the app holds after the resume, where no one can raise it again', async () => {
    const raise = (request: ApprovalRequest): ApprovalDecision => (request.kind === 'budget_raise' ? { verdict: 'edit', edited: 1_000_000 } : { verdict: 'approve' });
    const crashed = await runUntilKilled({ policy: 'balanced', maxTokens: 100 }, raise);
    const result = await resume(crashed);
    expect(result.status, result.stderr).toBe(0);
    expect(existsSync(join(crashed.workspace, 'two.txt'))).toBe(true);
    const raises = readDb(crashed.dataDir, (db) => db.prepare("SELECT count(*) AS n FROM approvals WHERE kind = 'budget_raise'").get() as { n: number });
    expect(raises.n).toBe(1);
  });

  it('a cap given anew with the resume stands over the raise made before it', async () => {
    const raise = (request: ApprovalRequest): ApprovalDecision => (request.kind === 'budget_raise' ? { verdict: 'edit', edited: 1_000_000 } : { verdict: 'approve' });
    const crashed = await runUntilKilled({ policy: 'balanced', maxTokens: 100 }, raise);
    const result = await resume(crashed, ['--max-tokens', '200']);
    expect(result.status, result.stderr).toBe(4);
    expect(result.stderr).toContain('200 tokens');
    expect(existsSync(join(crashed.workspace, 'two.txt'))).toBe(false);
  });
});
