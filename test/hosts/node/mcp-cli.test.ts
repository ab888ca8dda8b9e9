import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { ArchonStore } from '../../../src/core/store/archon-store';
import type { McpServerConfig } from '../../../src/shared/schemas/settings';
import { planReply, startModelServer, toolMessagesOf, type RecordedRequest, type ScriptedModelServer, type ScriptedToolCall } from '../../kit/scripted-model-server';
import { type CliResult, eventsOf, spawnArchon, spawnArchonAnswering } from '../../support/archon-process';
import { CHANGING_SERVER, EVERYTHING_SCRIPT, everythingStdio, FAILING_SERVERS, filesystemServer } from '../../support/mcp-servers';
import { processesMatching } from '../../support/processes';
import { useTempDirs } from '../../support/temp-dir';

/*
 * MCP servers end to end: the built CLI, real reference servers from npm started by the tests
 * (stdio inside bubblewrap, Streamable HTTP on loopback), a scripted model that calls their tools.
 */

const tempDir = useTempDirs();
let model: ScriptedModelServer | undefined;
const children: ChildProcess[] = [];
afterEach(async () => {
  await model?.close();
  model = undefined;
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

const TEST_TIMEOUT = 180_000;
const SECRET = 'mcp-secret-value-5e1b2c';

/** A one-step plan whose step calls these tools, then answers with what they returned. */
async function scriptCalls(calls: ScriptedToolCall[]): Promise<ScriptedModelServer> {
  model = await startModelServer({
    reply: (request) => {
      if (request.purpose === 'plan') return planReply([{ id: 'use', description: 'use the MCP tools' }]);
      if (request.purpose === 'final') return { content: 'final answer' };
      return toolMessagesOf(request).length === 0 ? { toolCalls: calls } : { content: 'step done' };
    },
  });
  return model;
}

function configFile(servers: Record<string, McpServerConfig>): string {
  const file = join(tempDir(), 'mcp.json');
  writeFileSync(file, JSON.stringify({ mcpServers: servers }));
  return file;
}

interface Machine {
  workspace: string;
  dataDir: string;
}

function machine(): Machine {
  return { workspace: tempDir(), dataDir: tempDir() };
}

function run(m: Machine, servers: Record<string, McpServerConfig>, args: string[] = []) {
  return spawnArchon(['run', 'use the MCP server', '--model-url', model?.url as string, '--data-dir', m.dataDir, '--workspace', m.workspace, '--mcp-config', configFile(servers), '--json', ...args], { OPENAI_API_KEY: '' });
}

/**
 * A run whose approvals are answered at the terminal prompt (`--approve prompt`, stdin piped): yes to
 * the plan and the final answer, no to every tool call, so a tool call's rejection is what is tested.
 */
function runRejectingToolCalls(m: Machine, servers: Record<string, McpServerConfig>): Promise<CliResult> {
  const args = ['run', 'use the MCP server', '--model-url', model?.url as string, '--data-dir', m.dataDir, '--workspace', m.workspace, '--mcp-config', configFile(servers), '--json', '--approve', 'prompt', '--policy', 'balanced'];
  const { child, done } = spawnArchonAnswering(args, (kind) => kind !== 'tool_call', { OPENAI_API_KEY: '' });
  children.push(child);
  return done;
}

/** The step request that carried the tools' results back to the model. */
function resultsRequest(server: ScriptedModelServer): RecordedRequest | undefined {
  return server.requests.find((request) => request.purpose === 'step' && toolMessagesOf(request).length > 0);
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** server-everything in its Streamable HTTP (or older SSE) mode on a loopback port, ready once it says so. */
async function startHttpEverything(mode: 'streamableHttp' | 'sse' = 'streamableHttp'): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_SCRIPT, mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  const lines = createInterface({ input: child.stderr as NodeJS.ReadableStream });
  await new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => /listening|running/.test(line) && resolve());
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code} before listening`)));
  });
  return `http://127.0.0.1:${port}/${mode === 'sse' ? 'sse' : 'mcp'}`;
}

describe('MCP servers in a run (archon run --mcp-config)', () => {
  it('server-everything over stdio: get-sum’s result reaches the next model request; env secrets are blanked out of what tools return', async () => {
    const server = await scriptCalls([
      { name: 'everything__get-sum', arguments: { a: 2, b: 3 } },
      { name: 'everything__get-env', arguments: {} },
    ]);
    const m = machine();
    const result = await run(m, { everything: { ...everythingStdio(), env: { API_TOKEN: SECRET } } }, ['--approve', 'auto']).done;
    expect(result.status, result.stderr).toBe(0);
    const step = server.requests.find((request) => request.purpose === 'step');
    expect(step?.body.tools?.map((tool) => tool.function.name)).toEqual(expect.arrayContaining(['everything__get-sum', 'everything__echo', 'calculator']));
    const [sum, env] = toolMessagesOf(resultsRequest(server) as RecordedRequest);
    expect(sum).toMatch(/\b5\b/);
    expect(env).toContain('API_TOKEN');
    expect(env).toContain('[redacted]');
    expect(`${result.stdout}${result.stderr}${JSON.stringify(server.requests)}`).not.toContain(SECRET);
  }, TEST_TIMEOUT);

  it('server-everything over Streamable HTTP: echo’s result reaches the next model request', async () => {
    const url = await startHttpEverything();
    const server = await scriptCalls([{ name: 'web__echo', arguments: { message: 'hello over http' } }]);
    const result = await run(machine(), { web: { url } }, ['--approve', 'auto']).done;
    expect(result.status, result.stderr).toBe(0);
    expect(toolMessagesOf(resultsRequest(server) as RecordedRequest)).toEqual([expect.stringContaining('hello over http')]);
  }, TEST_TIMEOUT);

  it('a server of the older SSE transport: reached through the fallback', async () => {
    const url = await startHttpEverything('sse');
    const server = await scriptCalls([{ name: 'old__echo', arguments: { message: 'hello over sse' } }]);
    const result = await run(machine(), { old: { url } }, ['--approve', 'auto']).done;
    expect(result.status, result.stderr).toBe(0);
    expect(toolMessagesOf(resultsRequest(server) as RecordedRequest)).toEqual([expect.stringContaining('hello over sse')]);
  }, TEST_TIMEOUT);

  it('a server that is not found, one that crashes and one that hangs at initialize: each named in a clear error; the run goes on with the others', async () => {
    const server = await scriptCalls([{ name: 'everything__echo', arguments: { message: 'still here' } }]);
    const result = await run(machine(), { ...FAILING_SERVERS, everything: everythingStdio() }, ['--approve', 'auto']).done;
    expect(result.status, result.stderr).toBe(0);
    const failures = eventsOf(result.stdout).flatMap((event) => (event.type === 'mcp.server_failed' ? [event] : []));
    expect(failures.map(({ server: name, kind }) => ({ name, kind })).sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: 'crashing', kind: 'crashed' },
      { name: 'hanging', kind: 'timeout' },
      { name: 'missing', kind: 'not_found' },
    ]);
    for (const failure of failures) expect(failure.message).toContain(`"${failure.server}"`);
    expect(failures.find((failure) => failure.server === 'crashing')?.message).toMatch(/exit code 7[\s\S]*cannot open the database/);
    expect(toolMessagesOf(resultsRequest(server) as RecordedRequest)).toEqual([expect.stringContaining('still here')]);
  }, TEST_TIMEOUT);

  it('server-filesystem rooted at the workspace: a write under balanced asks, showing the server, tool, description, annotations and hash; rejected, it does not happen', async () => {
    const m = machine();
    const target = join(m.workspace, 'written.txt');
    await scriptCalls([{ name: 'fs__write_file', arguments: { path: target, content: 'should not exist' } }]);
    const result = await runRejectingToolCalls(m, { fs: filesystemServer(m.workspace) });
    expect(result.status, result.stderr).toBe(0);
    expect(existsSync(target)).toBe(false);
    const asked = eventsOf(result.stdout).find((event) => event.type === 'approval.requested' && event.kind === 'tool_call');
    expect(asked).toMatchObject({
      action: {
        tool: 'fs__write_file',
        args: { path: target, content: 'should not exist' },
        mcp: { server: 'fs', tool: 'write_file', description: expect.any(String), annotations: { destructiveHint: true }, definitionHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) },
      },
    });
    expect(eventsOf(result.stdout)).toContainEqual(expect.objectContaining({ type: 'tool.refused', tool: 'fs__write_file', by: 'operator' }));
  }, TEST_TIMEOUT);

  it('a long-running server tool in flight: the emergency stop ends the run (exit 3), no server process is left, and after Re-arm the same server works', async () => {
    const m = machine();
    const marker = `mcp-estop-${process.pid}-${Date.now()}`;
    const servers = { everything: { ...everythingStdio(), args: [EVERYTHING_SCRIPT, 'stdio', marker] } };
    await scriptCalls([{ name: 'everything__trigger-long-running-operation', arguments: { duration: 600, steps: 600 } }]);
    const first = run(m, servers, ['--approve', 'auto']);
    const lines = createInterface({ input: first.child.stdout as NodeJS.ReadableStream });
    await new Promise<void>((resolve) => lines.on('line', (line) => line.includes('"tool.started"') && resolve()));
    expect(processesMatching(marker)).not.toEqual([]);
    const stop = await spawnArchon(['estop', '--data-dir', m.dataDir]).done;
    expect(stop.status, stop.stderr).toBe(0);
    const stopped = await first.done;
    expect(stopped.status, stopped.stderr).toBe(3);
    expect(processesMatching(marker)).toEqual([]);

    expect((await spawnArchon(['estop', '--reset', '--data-dir', m.dataDir]).done).status).toBe(0);
    const server = await scriptCalls([{ name: 'everything__get-sum', arguments: { a: 20, b: 22 } }]);
    const again = await run(m, servers, ['--approve', 'auto']).done;
    expect(again.status, again.stderr).toBe(0);
    expect(toolMessagesOf(resultsRequest(server) as RecordedRequest)).toEqual([expect.stringMatching(/\b42\b/)]);
  }, TEST_TIMEOUT);

  it('a tool whose definition changed between runs: the "never ask" setting made against the first no longer applies, tool.definition_changed is emitted, and the call asks', async () => {
    const m = machine();
    const changing = (description: string): Record<string, McpServerConfig> => ({ changing: { command: process.execPath, args: [CHANGING_SERVER], env: { TOOL_DESCRIPTION: description } } });

    await scriptCalls([{ name: 'changing__act', arguments: { what: 'unseen' } }]);
    const unseen = eventsOf((await runRejectingToolCalls(m, changing('Acts on the workspace.'))).stdout);
    expect(unseen).toContainEqual(expect.objectContaining({ type: 'approval.requested', kind: 'tool_call', action: expect.objectContaining({ tool: 'changing__act' }) }));
    const store = ArchonStore.open(m.dataDir);
    store.updateSettings({ toolApproval: { changing__act: 'never' } });
    store.close();

    await scriptCalls([{ name: 'changing__act', arguments: { what: 'first' } }]);
    const first = await runRejectingToolCalls(m, changing('Acts on the workspace.'));
    const firstEvents = eventsOf(first.stdout);
    expect(firstEvents.filter((event) => event.type === 'approval.requested' && event.kind === 'tool_call')).toEqual([]);
    expect(firstEvents).toContainEqual(expect.objectContaining({ type: 'tool.completed', tool: 'changing__act', status: 'success' }));

    await scriptCalls([{ name: 'changing__act', arguments: { what: 'second' } }]);
    const second = await runRejectingToolCalls(m, changing('Acts on the workspace, and deletes everything else.'));
    const secondEvents = eventsOf(second.stdout);
    expect(secondEvents).toContainEqual(expect.objectContaining({ type: 'tool.definition_changed', tool: 'changing__act', server: 'changing' }));
    expect(secondEvents).toContainEqual(expect.objectContaining({ type: 'approval.requested', kind: 'tool_call', action: expect.objectContaining({ tool: 'changing__act' }) }));
    expect(readFileSync(join(m.workspace, 'calls.txt'), 'utf8')).toBe('first\n');
  }, TEST_TIMEOUT);
});

describe('archon mcp list', () => {
  it('starts each server, lists its tools with their side effects, and says plainly what failed', async () => {
    const m = machine();
    const servers = { everything: { ...everythingStdio(), env: { API_TOKEN: SECRET } }, missing: FAILING_SERVERS.missing, crashing: FAILING_SERVERS.crashing, off: { command: 'true', disabled: true } };
    const file = configFile(servers);
    const json = await spawnArchon(['mcp', 'list', '--mcp-config', file, '--data-dir', m.dataDir, '--workspace', m.workspace, '--json']).done;
    expect(json.status).toBe(1);
    const listed = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { server: string; ok?: boolean; tools?: { registeredName: string; sideEffects: string }[]; failure?: { kind: string } });
    expect(listed.map((entry) => entry.server)).toEqual(['crashing', 'everything', 'missing', 'off']);
    expect(listed.find((entry) => entry.server === 'everything')?.tools).toEqual(
      expect.arrayContaining([expect.objectContaining({ registeredName: 'everything__get-sum', sideEffects: 'none' }), expect.objectContaining({ registeredName: 'everything__toggle-simulated-logging', sideEffects: 'reversible' })]),
    );
    expect(listed.find((entry) => entry.server === 'missing')?.failure?.kind).toBe('not_found');
    expect(listed.find((entry) => entry.server === 'crashing')?.failure?.kind).toBe('crashed');

    const text = await spawnArchon(['mcp', 'list', '--mcp-config', file, '--data-dir', m.dataDir, '--workspace', m.workspace]).done;
    expect(text.stdout).toMatch(/everything__get-sum\s+none\s+idempotent/);
    expect(text.stdout).toMatch(/missing: FAILED \(not_found\).*"archon-no-such-mcp-server" was not found/);
    expect(text.stdout).toMatch(/off: disabled/);
    expect(`${json.stdout}${text.stdout}${text.stderr}`).not.toContain(SECRET);
  }, TEST_TIMEOUT);

  it('a configuration file that cannot be used: exit 2, naming the file and the problem', async () => {
    const file = join(tempDir(), 'broken.json');
    writeFileSync(file, '{"mcpServers": {"bad name": {"command": "x"}}}');
    const result = await spawnArchon(['mcp', 'list', '--mcp-config', file, '--data-dir', tempDir()]).done;
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(file);
    expect(result.stderr).toContain('bad name');
  }, TEST_TIMEOUT);
});
