import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { McpSessions } from '../../../src/core/mcp/mcp-sessions';
import type { McpServerConfig } from '../../../src/shared/schemas/settings';
import { CHANGING_SERVER, ELICITING_SERVER, STORMING_SERVER } from '../../support/mcp-servers';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const open: McpSessions[] = [];
afterEach(async () => {
  for (const sessions of open.splice(0)) await sessions.close();
});

/** The changing server, started through a shell that first notes each start in starts.txt (in the workspace). */
const counted: McpServerConfig = { command: '/bin/sh', args: ['-c', 'echo started >> starts.txt; exec "$0" "$1"', process.execPath, CHANGING_SERVER] };

describe('McpSessions', () => {
  it('one start shared by every caller: a caller that stops gives up its wait, not the start the others wait for', async () => {
    const sessions = new McpSessions();
    open.push(sessions);
    const workspace = tempDir();
    const confinement = { workspace, sandbox: 'on' as const, allowNetwork: false, hidden: [] };
    const stopped = new AbortController();
    const first = sessions.session('changing', counted, confinement, stopped.signal);
    const second = sessions.session('changing', counted, confinement, AbortSignal.timeout(60_000));
    stopped.abort();
    await expect(first).rejects.toThrow('MCP server "changing" was not ready when the run was stopped.');
    const session = await second;
    expect(session.alive).toBe(true);
    expect(await sessions.session('changing', counted, confinement, AbortSignal.timeout(60_000))).toBe(session);
    expect(readFileSync(join(workspace, 'starts.txt'), 'utf8')).toBe('started\n');
    await sessions.stopAll();
    expect(session.alive).toBe(false);
  }, 120_000);

  it('callers that find the session broken at once start one new session between them, and the emergency stop reaches it', async () => {
    const sessions = new McpSessions();
    open.push(sessions);
    const workspace = tempDir();
    const confinement = { workspace, sandbox: 'on' as const, allowNetwork: false, hidden: [] };
    const broken = await sessions.session('changing', counted, confinement, AbortSignal.timeout(60_000));
    await broken.kill();
    await expect.poll(() => broken.alive, { timeout: 30_000 }).toBe(false);
    const [a, b] = await Promise.all([0, 1].map(() => sessions.session('changing', counted, confinement, AbortSignal.timeout(60_000))));
    expect(a).toBe(b);
    expect(readFileSync(join(workspace, 'starts.txt'), 'utf8')).toBe('started\nstarted\n');
    await sessions.stopAll();
    expect(a?.alive).toBe(false);
  }, 120_000);

  it('an elicitation goes to the one call in flight; with two in flight it is declined and the log says why', async () => {
    const lines: string[] = [];
    const sessions = new McpSessions(undefined, pino({}, { write: (line: string) => lines.push(line) }));
    open.push(sessions);
    const confinement = { workspace: tempDir(), sandbox: 'on' as const, allowNetwork: false, hidden: [] };
    const session = await sessions.session('eliciting', { command: process.execPath, args: [ELICITING_SERVER] }, confinement, AbortSignal.timeout(60_000));
    const asked: string[] = [];
    const answer = (who: string) => async () => {
      asked.push(who);
      return { action: 'accept' as const, content: { name: who } };
    };
    const signal = AbortSignal.timeout(60_000);
    const held = session.callTool('hold', {}, signal, 60_000, answer('holding run'));
    const crowded = await session.callTool('ask', {}, signal, 60_000, answer('asking run'));
    expect(crowded.content).toEqual([{ type: 'text', text: '{"action":"decline"}' }]);
    await held;
    expect(lines.map((line) => JSON.parse(line) as { msg: string })).toEqual([expect.objectContaining({ msg: expect.stringContaining('MCP server "eliciting" asked for input (elicitation) with 2 calls in flight; declined') })]);
    const alone = await session.callTool('ask', {}, signal, 60_000, answer('asking run'));
    expect(alone.content).toEqual([{ type: 'text', text: '{"action":"accept","content":{"name":"asking run"}}' }]);
    expect(asked).toEqual(['asking run']);
  }, 120_000);

  it('a storm of tools/list_changed notifications refreshes the tool list once at a time, not once per notification', async () => {
    const sessions = new McpSessions();
    open.push(sessions);
    const workspace = tempDir();
    const confinement = { workspace, sandbox: 'on' as const, allowNetwork: false, hidden: [] };
    const session = await sessions.session('storming', { command: process.execPath, args: [STORMING_SERVER] }, confinement, AbortSignal.timeout(60_000));
    await session.callTool('storm', { times: 50 }, AbortSignal.timeout(60_000), 60_000, async () => ({ action: 'decline' }));
    await vi.waitFor(() => expect(session.tools.map((tool) => tool.name)).toContain('late'), { timeout: 60_000, interval: 50 });
    await sessions.close();
    const lists = readFileSync(join(workspace, 'lists.txt'), 'utf8').trim().split('\n');
    // The start's list, then one refresh and at most one more for the notifications that came during it.
    expect(lists.length).toBeGreaterThanOrEqual(2);
    expect(lists.length).toBeLessThanOrEqual(3);
  }, 120_000);
});
