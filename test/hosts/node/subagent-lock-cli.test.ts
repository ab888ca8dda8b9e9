import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import type { ApprovalDecision, ApprovalRequest } from '../../../src/shared/schemas/approval';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { planReply, requestText, stepIdOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon, useServe, type ServeProcess } from '../../support/archon-process';
import { useModelServers } from '../../support/model-servers';
import { useTempDirs } from '../../support/temp-dir';

// Runs as processes on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 240_000 });
const tempDir = useTempDirs();
const serveModel = useModelServers();
const startServe = useServe();

const PARENT_GOAL = 'Write a short report on the capital of France';
const SUB_GOAL = 'Find the capital of France';
const LOCK: ApprovalDecision = { verdict: 'lock', constraint: { kind: 'never_tool', tool: 'run_command' }, feedback: 'never use run_command' };

const isChild = (request: RecordedRequest) => /^Goal: Find the capital of France$/m.test(requestText(request));
const hasToolResult = (request: RecordedRequest) => request.body.messages?.some((message) => message.role === 'tool') ?? false;
const touch = (file: string): ScriptedReply => ({ toolCalls: [{ name: 'run_command', arguments: { command: `touch ${file}` } }] });

interface Script {
  /** The parent's steps: `probe` (first, or beside the sub-agent) and the sub-agent's `research`, then `report`. */
  parallel: boolean;
  /** The parent's `probe` step asks for run_command: the call the operator locks. */
  probe: (request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>;
  /** The child's one step, `cmd`, by how many times it has been asked. */
  cmd: (turn: number, request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>;
}

function scripted({ parallel, probe, cmd }: Script) {
  let cmdTurns = 0;
  return (request: RecordedRequest): ScriptedReply | Promise<ScriptedReply> => {
    if (request.purpose === 'plan') {
      if (isChild(request)) return planReply([{ id: 'cmd', description: 'Check the capital with a command' }]);
      return planReply([
        { id: 'probe', description: 'Probe the machine with a command' },
        { id: 'research', kind: 'subagent', goal: SUB_GOAL, dependencies: parallel ? [] : ['probe'] },
        { id: 'report', description: 'Write the report', dependencies: ['probe', 'research'] },
      ]);
    }
    if (request.purpose === 'final') return { content: isChild(request) ? 'Paris.' : 'Report: Paris.' };
    const id = stepIdOf(request);
    if (id === 'probe') return hasToolResult(request) ? { content: 'probed without a shell' } : probe(request);
    if (id === 'cmd') return cmd(cmdTurns++, request);
    return { content: 'report written' };
  };
}

interface Operator {
  socket: WebSocket;
  call<T>(command: string, input?: unknown): Promise<T>;
}

async function operatorOf(serve: ServeProcess): Promise<Operator> {
  const socket = new WebSocket(`ws://127.0.0.1:${serve.url.port}/ws`, ['archon', `archon-token.${serve.token}`], { origin: serve.origin });
  const waiting = new Map<number, (result: { ok: boolean; value?: unknown; error?: unknown }) => void>();
  let nextId = 1;
  socket.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { id?: number; result?: { ok: boolean; value?: unknown } };
    if (frame.id !== undefined && frame.result) waiting.get(frame.id)?.(frame.result);
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  return {
    socket,
    call: (command, input = {}) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, (result) => (result.ok ? resolve(result.value as never) : reject(new Error(`${command}: ${JSON.stringify(result.error)}`))));
        socket.send(JSON.stringify({ id, command, input }));
      }),
  };
}

/**
 * The operator at the UI: locks run_command at its first request; the lock must hold by itself, so
 * anything asked after it (another run_command included) is approved. Returns every request answered.
 */
function answerApprovals(operator: Operator, onLocked: () => void): { asked: ApprovalRequest[]; stop: () => void } {
  const asked: ApprovalRequest[] = [];
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      for (const request of await operator.call<ApprovalRequest[]>('approvals.list').catch(() => [])) {
        if (asked.some((seen) => seen.id === request.id)) continue;
        asked.push(request);
        const lock = request.kind === 'tool_call' && !asked.slice(0, -1).some((seen) => seen.kind === 'tool_call');
        await operator.call('approvals.decide', { approvalId: request.id, actionHash: request.actionHash, decision: lock ? LOCK : { verdict: 'approve' } }).catch(() => undefined);
        if (lock) onLocked();
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  void loop();
  return { asked, stop: () => (stopped = true) };
}

function eventsOf(dataDir: string, runId: string): RunEvent[] {
  const db = new Database(join(dataDir, 'archon.db'));
  try {
    const rows = db.prepare('SELECT run_id, seq, type, ts, body_json FROM events WHERE run_id = ? ORDER BY seq').all(runId) as { run_id: string; seq: number; type: string; ts: string; body_json: string }[];
    return rows.map((row) => RunEventSchema.parse({ ...(JSON.parse(row.body_json) as object), runId: row.run_id, seq: row.seq, type: row.type, ts: row.ts }));
  } finally {
    db.close();
  }
}

function childRunId(dataDir: string): string | undefined {
  const db = new Database(join(dataDir, 'archon.db'));
  try {
    return (db.prepare("SELECT id FROM runs WHERE json_extract(options_json, '$.parentRunId') IS NOT NULL").get() as { id: string } | undefined)?.id;
  } finally {
    db.close();
  }
}

const statusOf = async (operator: Operator, runId: string) => (await operator.call<{ run: { status: string } }>('runs.get', { runId })).run.status;
const ranCommand = (events: RunEvent[]) => events.filter((event) => event.type === 'tool.started' && event.tool === 'run_command');
const refusedAsLocked = (events: RunEvent[]) => events.filter((event) => event.type === 'tool.refused' && event.tool === 'run_command' && event.code === 'locked');

async function startTree(script: Script, onLocked: () => void = () => undefined) {
  const model = await serveModel({ reply: scripted(script) });
  const [dataDir, workspace] = [tempDir(), tempDir()];
  const serve = await startServe(dataDir, ['--model-url', model.url, '--workspace', workspace, '--policy', 'permissive']);
  const operator = await operatorOf(serve);
  const approvals = answerApprovals(operator, onLocked);
  const { runId } = await operator.call<{ runId: string }>('runs.start', { goal: PARENT_GOAL });
  return { model, dataDir, workspace, serve, operator, approvals, runId };
}

describe("an operator's lock holds for the run's sub-agents (built CLI, archon serve, scripted model)", () => {
  it('a sub-agent started after the lock: its run_command is refused as locked, never started, never asked about, and writes nothing', async () => {
    const tree = await startTree({ parallel: false, probe: () => touch('parent-marker'), cmd: (turn) => (turn === 0 ? touch('child-marker') : { content: 'Paris, without a shell' }) });
    await expect.poll(() => statusOf(tree.operator, tree.runId), { timeout: 180_000, interval: 250 }).toBe('completed');
    tree.approvals.stop();
    const child = childRunId(tree.dataDir) as string;
    expect(existsSync(join(tree.workspace, 'child-marker'))).toBe(false);
    const childEvents = eventsOf(tree.dataDir, child);
    expect(childEvents).toContainEqual(expect.objectContaining({ type: 'constraint.locked', constraint: { kind: 'never_tool', tool: 'run_command' } }));
    expect(refusedAsLocked(childEvents)).toEqual([expect.objectContaining({ stepId: 'cmd', by: 'operator' })]);
    expect(ranCommand(childEvents)).toEqual([]);
    expect(ranCommand(eventsOf(tree.dataDir, tree.runId))).toEqual([]);
    expect(tree.approvals.asked.filter((request) => request.kind === 'tool_call')).toHaveLength(1);
    expect(existsSync(join(tree.workspace, 'parent-marker'))).toBe(false);
  });

  it('a lock placed while the sub-agent already runs reaches its next call', async () => {
    let childAsked!: () => void;
    let lockPlaced!: () => void;
    const childWaiting = new Promise<void>((resolve) => (childAsked = resolve));
    const locked = new Promise<void>((resolve) => (lockPlaced = resolve));
    const tree = await startTree(
      {
        parallel: true,
        probe: async () => {
          await childWaiting;
          return touch('parent-marker');
        },
        cmd: async (turn) => {
          if (turn > 0) return { content: 'Paris, without a shell' };
          childAsked();
          await locked;
          return touch('child-marker');
        },
      },
      () => lockPlaced(),
    );
    await expect.poll(() => statusOf(tree.operator, tree.runId), { timeout: 180_000, interval: 250 }).toBe('completed');
    tree.approvals.stop();
    expect(existsSync(join(tree.workspace, 'child-marker'))).toBe(false);
    const childEvents = eventsOf(tree.dataDir, childRunId(tree.dataDir) as string);
    expect(refusedAsLocked(childEvents)).toEqual([expect.objectContaining({ stepId: 'cmd' })]);
    expect(ranCommand(childEvents)).toEqual([]);
    expect(tree.approvals.asked.filter((request) => request.kind === 'tool_call')).toHaveLength(1);
  });

  it('the sub-agent resumed on its own after kill -9 keeps the lock (from its own events), even with every approval answered yes', async () => {
    const tree = await startTree({ parallel: false, probe: () => touch('parent-marker'), cmd: (turn, request) => (turn === 0 ? { hang: true } : hasToolResult(request) ? { content: 'Paris, without a shell' } : touch('child-marker')) });
    await expect.poll(() => tree.model.chatRequests.filter((request) => stepIdOf(request) === 'cmd').length, { timeout: 180_000, interval: 250 }).toBe(1);
    tree.approvals.stop();
    tree.serve.child.kill('SIGKILL');
    await new Promise((resolve) => tree.serve.child.once('exit', resolve));
    const child = childRunId(tree.dataDir) as string;

    const resumed = await spawnArchon(['resume', child, '--model-url', tree.model.url, '--data-dir', tree.dataDir, '--approve', 'auto', '--json'], { OPENAI_API_KEY: '' }).done;
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(existsSync(join(tree.workspace, 'child-marker'))).toBe(false);
    const childEvents = eventsOf(tree.dataDir, child);
    expect(refusedAsLocked(childEvents)).toEqual([expect.objectContaining({ stepId: 'cmd', by: 'operator' })]);
    expect(ranCommand(childEvents)).toEqual([]);
  });
});
