import { afterEach, describe, expect, it } from 'vitest';
import { planReply, startModelServer, toolMessagesOf, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { everythingStdio } from '../../support/mcp-servers';
import { useServices } from '../../support/runtime';
import { useTempDirs } from '../../support/temp-dir';

const openServices = useServices();
const tempDir = useTempDirs();
let model: ScriptedModelServer | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

describe('runs started from the app', () => {
  it('use the MCP servers of Settings, through the process’s shared sessions', async () => {
    const { runtime, services } = openServices();
    runtime.store.updateSettings({ mcpServers: { everything: everythingStdio() } });
    model = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'sum', description: 'add two numbers with the MCP server' }]);
        if (request.purpose === 'final') return { content: 'done' };
        return toolMessagesOf(request).length === 0 ? { toolCalls: [{ name: 'everything__get-sum', arguments: { a: 19, b: 23 } }] } : { content: 'summed' };
      },
    });
    // The operator approves whatever the app's queue asks (the plan, the final answer).
    services.approvals.onChange(() => {
      for (const request of services.approvals.list()) services.approvals.answer(request.id, request.actionHash, { verdict: 'approve' });
    });
    const { runId } = await services.manager.start({ goal: 'add', modelUrl: model.url, workspace: tempDir(), policy: 'balanced' }, new AbortController().signal);
    const server = model;
    await expect.poll(() => server.requests.flatMap(toolMessagesOf), { timeout: 60_000 }).toEqual([expect.stringMatching(/\b42\b/)]);
    expect(runtime.store.runs.events(runId)).toContainEqual(expect.objectContaining({ type: 'tool.started', tool: 'everything__get-sum', sideEffects: 'none' }));
  }, 120_000);
});
