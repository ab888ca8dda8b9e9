import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { McpSessions } from '../../../src/core/mcp/mcp-sessions';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { planReply, startModelServer, toolMessagesOf, type ScriptedModelServer, type ScriptedToolCall } from '../../kit/scripted-model-server';
import type { ApprovalRequest } from '../../../src/shared/schemas/approval';
import { spawnArchon, useServe, type ServeProcess } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

/*
 * The red-team attack: a stdio MCP server writes more than 10 MiB in one message (no newline, a huge
 * result, a huge tools/list). The SDK's read buffer threw in the stdout handler and killed the whole
 * process. Now a message over the limit (8 MiB) stops that server and fails its call, naming both.
 */

const FLOODING_SERVER = fileURLToPath(new URL('../../fixtures/mcp/flooding-server.mjs', import.meta.url));
const flooding = { command: process.execPath, args: [FLOODING_SERVER] };
const tempDir = useTempDirs();
const startServe = useServe();
let model: ScriptedModelServer | undefined;
const sessions: McpSessions[] = [];
afterEach(async () => {
  await model?.close();
  model = undefined;
  for (const open of sessions.splice(0)) await open.close();
});

const eventsOf = (stdout: string): RunEvent[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => RunEventSchema.parse(JSON.parse(line)));

type Result = { ok: boolean; value?: unknown; error?: { code: string; message: string } };

/** The page's side of `archon serve`: commands over its WebSocket. */
async function page(serve: ServeProcess): Promise<(command: string, input?: unknown) => Promise<Result>> {
  const ws = new WebSocket(`ws://127.0.0.1:${serve.url.port}/ws`, ['archon', `archon-token.${serve.token}`], { origin: serve.origin });
  const waiting = new Map<number, (result: Result) => void>();
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { id?: number; result?: Result };
    if (frame.id !== undefined && frame.result) waiting.get(frame.id)?.(frame.result);
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let nextId = 1;
  return (command, input = {}) => {
    const id = nextId++;
    return new Promise((resolve) => {
      waiting.set(id, resolve);
      ws.send(JSON.stringify({ id, command, input }));
    });
  };
}

/** A model whose one step makes these calls, one a turn, then answers. */
async function scriptCalls(calls: ScriptedToolCall[][]): Promise<ScriptedModelServer> {
  model = await startModelServer({
    reply: (request) => {
      if (request.purpose === 'plan') return planReply([{ id: 'use', description: 'use the flooding server' }]);
      if (request.purpose === 'final') return { content: 'final answer' };
      const next = calls[toolMessagesOf(request).length];
      return next ? { toolCalls: next } : { content: 'step done' };
    },
  });
  return model;
}

const LIMIT_MESSAGE = /MCP server "flooding" sent a message larger than 8 MiB \(the limit of one message; raise "maxMessageBytes" in its configuration if its results are that large\), so it was stopped/;

describe('a stdio MCP server that sends an oversized message', () => {
  it('12 MiB without a newline, then a 12 MiB result: each call fails naming the server and the limit, the server is started again, the run ends', async () => {
    await scriptCalls([[{ name: 'flooding__flood', arguments: {} }], [{ name: 'flooding__huge', arguments: {} }], [{ name: 'flooding__small', arguments: {} }]]);
    const config = join(tempDir(), 'mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { flooding } }));
    const args = ['run', 'use the MCP server', '--model-url', (model as ScriptedModelServer).url, '--data-dir', tempDir(), '--workspace', tempDir(), '--mcp-config', config, '--json', '--approve', 'auto'];
    const result = await spawnArchon(args, { OPENAI_API_KEY: '' }).done;
    expect(result.status, result.stderr).toBe(0);
    const events = eventsOf(result.stdout);
    const completed = events.flatMap((event) => (event.type === 'tool.completed' ? [event] : []));
    expect(completed.map((event) => event.status)).toEqual(['error', 'error', 'success']);
    for (const failed of completed.slice(0, 2)) expect(failed.content).toMatch(LIMIT_MESSAGE);
    expect(completed[2]?.content).toContain('small');
    expect(events.at(-1)?.type).toBe('run.completed');
  }, 180_000);

  it('under archon serve, a run whose server floods gets that call failed and ends; the host keeps serving', async () => {
    const { url } = await scriptCalls([[{ name: 'flooding__flood', arguments: {} }]]);
    const serve = await startServe(tempDir(), ['--model-url', url, '--workspace', tempDir(), '--policy', 'permissive', '--trust-ui']);
    const call = await page(serve);
    expect(await call('settings.update', { mcpServers: { flooding } })).toMatchObject({ ok: true });
    const started = await call('runs.start', { goal: 'use the flooding server' });
    expect(started.ok, JSON.stringify(started.error)).toBe(true);
    const { runId } = started.value as { runId: string };
    const status = async () => {
      for (const request of (await call('approvals.list')).value as ApprovalRequest[]) await call('approvals.decide', { approvalId: request.id, actionHash: request.actionHash, decision: { verdict: 'approve' } });
      return ((await call('runs.get', { runId })).value as { run: { status: string } }).run.status;
    };
    // The step's answer does not say its call failed, so validation may fail the run: either way it ends, and the host stays up.
    await expect.poll(status, { timeout: 60_000 }).toMatch(/^(completed|failed)$/);
    const { events } = (await call('runs.get', { runId })).value as { events: RunEvent[] };
    const completed = events.flatMap((event) => (event.type === 'tool.completed' ? [event] : []));
    expect(completed.length).toBeGreaterThan(0);
    for (const failed of completed) expect(failed).toMatchObject({ status: 'error', content: expect.stringMatching(LIMIT_MESSAGE) });
    expect(await call('app.info')).toMatchObject({ ok: true });
    expect(serve.child.exitCode).toBeNull();
  }, 180_000);

  it('a tools/list of 12 MiB: the server fails to start, naming the limit; a larger maxMessageBytes lets it through', async () => {
    const open = new McpSessions();
    sessions.push(open);
    const confinement = { workspace: tempDir(), sandbox: 'on' as const, allowNetwork: false, hidden: [] };
    const padded = { ...flooding, env: { FLOOD_TOOLS_LIST: '1' } };
    await expect(open.session('flooding', padded, confinement, AbortSignal.timeout(60_000))).rejects.toThrow(LIMIT_MESSAGE);
    const raised = await open.session('flooding', { ...padded, maxMessageBytes: 16 * 1024 * 1024 }, confinement, AbortSignal.timeout(60_000));
    expect(raised.tools.map((tool) => tool.name)).toContain('flood');
  }, 120_000);
});
