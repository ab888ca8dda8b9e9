import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ToolRegistry, type ToolDefinition } from '../../../src/core/tools/tool-registry';
import { planReply, toolMessagesOf, type RecordedRequest } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';
import { EFFECT_THEN_EXIT_SERVER } from '../../support/mcp-servers';
import { useMcpToolsets } from '../../support/mcp-toolsets';
import { useTempDirs } from '../../support/temp-dir';

/* A real stdio server (under bubblewrap) that acts, then exits before it answers. */

const tempDir = useTempDirs();
const startEngine = useEngine();
const toolsetOf = useMcpToolsets();

const TEST_TIMEOUT = 120_000;
const SERVERS = { effects: { command: process.execPath, args: [EFFECT_THEN_EXIT_SERVER] } };

async function effectTools(workspace: string): Promise<ToolRegistry> {
  return (await toolsetOf(SERVERS, workspace)).registry;
}

const effects = (workspace: string) => readFileSync(join(workspace, 'effects.txt'), 'utf8');

describe('an MCP server that dies with a call in flight', () => {
  it('a tool that is not idempotent: the outcome is unknown and the model is told to check; an idempotent one is a plain error; a JSON-RPC error reply stays a plain error', async () => {
    const workspace = tempDir();
    const registry = await effectTools(workspace);
    const call = (tool: string, line: string) => registry.execute(registry.get(`effects__${tool}`) as ToolDefinition, { line }, { signal: AbortSignal.timeout(60_000), workspace, runId: 'r', stepId: 's', callId: 'c' });

    const appended = await call('append_line', 'paid invoice 48213');
    expect(appended).toMatchObject({ status: 'error', metadata: { outcome: 'unknown', mcpFailure: 'crashed' } });
    expect(appended.content).toMatch(/^Outcome unknown: MCP server "effects" stopped before it answered the call to append_line.*Check its effect first.*exited \(exit code 0\)/s);
    expect(effects(workspace)).toBe('paid invoice 48213\n');

    const set = await call('set_line', 'state 2');
    expect(set).toMatchObject({ status: 'error', metadata: { mcpFailure: 'crashed' } });
    expect(set.metadata.outcome).toBeUndefined();
    expect(set.content).toMatch(/^MCP server "effects" exited \(exit code 0\).*during the call to set_line; it will be started again/s);

    const refused = await call('refuse_line', 'never');
    expect(refused.status).toBe('error');
    expect(refused.content).toMatch(/the ledger is locked/);
    expect(refused.content).not.toMatch(/Outcome unknown/);
    expect(effects(workspace)).toBe('state 2\n');
  }, TEST_TIMEOUT);

  it('in a run: the model reads "Outcome unknown", the journal keeps it, the call is not made again, and the run does not end a plain success', async () => {
    const workspace = tempDir();
    const registry = await effectTools(workspace);
    const engine = await startEngine(
      {
        reply: (request) => {
          if (request.purpose === 'plan') return planReply([{ id: 'pay', description: 'record the payment once' }]);
          if (request.purpose === 'final') return { content: 'done' };
          return toolMessagesOf(request).length === 0 ? { toolCalls: [{ name: 'effects__append_line', arguments: { line: 'paid invoice 48213' } }] } : { content: 'checked the ledger' };
        },
      },
      { tools: () => registry },
    );
    const result = await engine.run('record the payment', { workspace });
    // A call that may or may not have happened is a gap the operator must accept, never a silent success.
    expect(result).toMatchObject({ status: 'failed', error: expect.stringContaining('effects__append_line in step pay may or may not have happened') });
    const told = engine.server.requests.find((request) => request.purpose === 'step' && toolMessagesOf(request).length > 0) as RecordedRequest;
    expect(toolMessagesOf(told)).toEqual([expect.stringMatching(/^error: Outcome unknown: MCP server "effects" stopped before it answered/)]);
    expect(engine.events).toContainEqual(expect.objectContaining({ type: 'tool.completed', tool: 'effects__append_line', status: 'error', content: expect.stringMatching(/^Outcome unknown/) }));
    const started = engine.events.find((event) => event.type === 'tool.started');
    const journal = engine.runtime.store.runs.toolCall(started && 'callId' in started ? started.callId : '');
    expect(journal?.result).toMatchObject({ status: 'error', metadata: { outcome: 'unknown' } });
    expect(effects(workspace)).toBe('paid invoice 48213\n');
  }, TEST_TIMEOUT);
});
