import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { planReply, startModelServer, toolMessagesOf, type RecordedRequest, type ScriptedModelServer, type ScriptedToolCall } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { onlyRunId } from '../../support/crash-scenario';
import { EFFECT_THEN_EXIT_SERVER } from '../../support/mcp-servers';
import { useTempDirs } from '../../support/temp-dir';

/*
 * A stdio MCP server (under bubblewrap) whose `append_line` appends to effects.txt and exits before it
 * answers, and whose `refuse_line` answers with a JSON-RPC error; the built CLI and the scripted model.
 */

const tempDir = useTempDirs();
let model: ScriptedModelServer | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

const TEST_TIMEOUT = 180_000;
const LINE = 'paid invoice 48213';

const eventsOf = (stdout: string): RunEvent[] =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => RunEventSchema.parse(JSON.parse(line)));

/** One step that makes these calls, one turn each, then answers. */
async function scriptTurns(turns: ScriptedToolCall[]): Promise<ScriptedModelServer> {
  model = await startModelServer({
    reply: (request) => {
      if (request.purpose === 'plan') return planReply([{ id: 'pay', description: 'record the payment once' }]);
      if (request.purpose === 'final') return { content: 'done' };
      const next = turns[toolMessagesOf(request).length];
      return next ? { toolCalls: [next] } : { content: 'checked the ledger' };
    },
  });
  return model;
}

function flags(server: ScriptedModelServer, dataDir: string, workspace: string): string[] {
  const config = join(tempDir(), 'mcp.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { effects: { command: process.execPath, args: [EFFECT_THEN_EXIT_SERVER] } } }));
  return ['--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--mcp-config', config, '--approve', 'auto', '--verify', 'off', '--json'];
}

const stepRequests = (server: ScriptedModelServer): RecordedRequest[] => server.requests.filter((request) => request.purpose === 'step');
const effects = (workspace: string) => readFileSync(join(workspace, 'effects.txt'), 'utf8');

describe('an MCP server that exits after its effect and before it answers (archon run --mcp-config)', () => {
  it('the model reads "Outcome unknown" and tool.completed says so; a JSON-RPC error stays a plain error; the effect happened once', async () => {
    const server = await scriptTurns([
      { name: 'effects__refuse_line', arguments: { line: LINE } },
      { name: 'effects__append_line', arguments: { line: LINE } },
    ]);
    const [dataDir, workspace] = [tempDir(), tempDir()];
    const result = await spawnArchon(['run', 'record the payment', ...flags(server, dataDir, workspace)], { OPENAI_API_KEY: '' }).done;
    expect(result.status, result.stderr).toBe(0);

    const [refused, lost] = toolMessagesOf(stepRequests(server).at(-1) as RecordedRequest);
    expect(refused).toMatch(/^error: .*the ledger is locked/);
    expect(refused).not.toContain('Outcome unknown');
    expect(lost).toMatch(/^error: Outcome unknown: MCP server "effects" stopped before it answered the call to append_line/);
    const completed = eventsOf(result.stdout).filter((event) => event.type === 'tool.completed');
    expect(completed).toEqual([
      expect.objectContaining({ tool: 'effects__refuse_line', status: 'error', content: expect.not.stringContaining('Outcome unknown') }),
      expect.objectContaining({ tool: 'effects__append_line', status: 'error', content: expect.stringMatching(/^Outcome unknown/) }),
    ]);
    expect(effects(workspace)).toBe(`${LINE}\n`);
  }, TEST_TIMEOUT);

  it('killed with -9 once that outcome was announced, `archon resume` gives the model the recorded outcome and does not call again', async () => {
    const server = await scriptTurns([{ name: 'effects__append_line', arguments: { line: LINE } }]);
    const [dataDir, workspace] = [tempDir(), tempDir()];
    const common = flags(server, dataDir, workspace);
    const first = spawnArchon(['run', 'record the payment', ...common], { OPENAI_API_KEY: '' });
    createInterface({ input: first.child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      if (line.startsWith('{') && RunEventSchema.parse(JSON.parse(line)).type === 'tool.completed') first.child.kill('SIGKILL');
    });
    const killed = await first.done;
    expect(killed.status, killed.stderr).toBeNull();
    const before = stepRequests(server).length;

    const resumed = await spawnArchon(['resume', onlyRunId(dataDir) as string, ...common], { OPENAI_API_KEY: '' }).done;
    expect(resumed.status, resumed.stderr).toBe(0);
    const told = stepRequests(server).slice(before);
    expect(toolMessagesOf(told[0] as RecordedRequest)).toEqual([expect.stringMatching(/^error: Outcome unknown: MCP server "effects"/)]);
    const events = eventsOf(resumed.stdout);
    expect(events.filter((event) => event.type === 'tool.started' || (event.type === 'approval.requested' && event.kind === 'uncertain_repeat'))).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed' });
    expect(effects(workspace)).toBe(`${LINE}\n`);
  }, TEST_TIMEOUT);
});
