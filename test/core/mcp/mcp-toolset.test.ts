import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ApprovalChannel } from '../../../src/core/approval/approval-channel';
import { ToolRegistry, type ToolDefinition } from '../../../src/core/tools/tool-registry';
import type { McpServerConfig } from '../../../src/shared/schemas/settings';
import { planReply, toolMessagesOf } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';
import { CHANGING_SERVER, ELICITING_SERVER, everythingStdio } from '../../support/mcp-servers';
import { useMcpToolsets } from '../../support/mcp-toolsets';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const startEngine = useEngine();

const TEST_TIMEOUT = 120_000;

const toolsetOf = useMcpToolsets();

const context = (workspace: string) => ({ signal: AbortSignal.timeout(60_000), workspace, runId: 'r', stepId: 's', callId: 'c' });

describe('MCP tools as Archon tools', () => {
  it('checks arguments against the server’s input schema before anything is sent', async () => {
    const { registry } = await toolsetOf({ everything: everythingStdio() });
    const prepared = registry.prepare('everything__get-sum', { a: 'two', b: 3 });
    expect(prepared.ok).toBe(false);
    if (!prepared.ok) expect(prepared.result.content).toMatch(/Invalid arguments for everything__get-sum/);
    expect(registry.specs().find((spec) => spec.name === 'everything__get-sum')?.parameters).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } });
  }, TEST_TIMEOUT);

  it('a server that crashes mid-call: the call gets an error naming the server and how it ended; the next call starts it again', async () => {
    const { registry, workspace } = await toolsetOf({ changing: { command: process.execPath, args: [CHANGING_SERVER] } });
    const crash = registry.get('changing__crash') as ToolDefinition;
    const act = registry.get('changing__act') as ToolDefinition;
    const crashed = await registry.execute(crash, {}, context(workspace));
    expect(crashed.status).toBe('error');
    expect(crashed.content).toMatch(/MCP server "changing" exited \(exit code 3\).*during the call to crash/s);
    const again = await registry.execute(act, { what: 'after the crash' }, context(workspace));
    expect(again).toMatchObject({ status: 'success', content: 'acted: after the crash' });
  }, TEST_TIMEOUT);

  it('a tool whose definition changes while the run goes on (tools/list_changed) is not called under the old definition', async () => {
    const config = { command: process.execPath, args: [CHANGING_SERVER] };
    const { registry, workspace, sessions } = await toolsetOf({ changing: config });
    const rename = await registry.execute(registry.get('changing__rename') as ToolDefinition, {}, context(workspace));
    expect(rename.content).toBe('renamed');
    const session = await sessions.session('changing', config, { workspace, sandbox: 'on', allowNetwork: false, hidden: [] }, AbortSignal.timeout(30_000));
    await expect.poll(() => session.tools.find((tool) => tool.name === 'act')?.description, { timeout: 30_000 }).toBe('Acts, differently now.');
    const act = await registry.execute(registry.get('changing__act') as ToolDefinition, { what: 'x' }, context(workspace));
    expect(act).toMatchObject({ status: 'error', content: expect.stringMatching(/changed or removed act since the run started; the call did not run/) });
    expect(existsSync(join(workspace, 'calls.txt'))).toBe(false);
  }, TEST_TIMEOUT);

  it('images and resources come back as parts; text stays the content', async () => {
    const { registry, workspace } = await toolsetOf({ everything: everythingStdio() });
    const image = await registry.execute(registry.get('everything__get-tiny-image') as ToolDefinition, {}, context(workspace));
    expect(image.status).toBe('success');
    expect(image.parts).toContainEqual(expect.objectContaining({ type: 'image', mimeType: 'image/png', data: expect.stringMatching(/^[A-Za-z0-9+/=]+$/) }));
    const links = await registry.execute(registry.get('everything__get-resource-links') as ToolDefinition, { count: 2 }, context(workspace));
    expect(links.parts?.filter((part) => part.type === 'resource')).toHaveLength(2);
    expect(links.content).toContain('[resource ');
  }, TEST_TIMEOUT);
});

describe('approval settings of MCP tools', () => {
  const changing = (description: string): Record<string, McpServerConfig> => ({ changing: { command: process.execPath, args: [CHANGING_SERVER], env: { TOOL_DESCRIPTION: description } } });
  const actOf = (toolset: { registry: ToolRegistry }) => toolset.registry.get('changing__act') as ToolDefinition;

  it('a setting made before the tool was first seen may only ask more; one made against it applies', async () => {
    const dataDir = tempDir();
    const first = await toolsetOf(changing('Acts.'), tempDir(), dataDir);
    expect(actOf(first).approvalOverride?.({ changing__act: 'never' })).toBeUndefined();
    expect(actOf(first).approvalOverride?.({ 'changing__*': 'always' })).toBe('always');
    first.store.updateSettings({ toolApproval: { changing__act: 'never' } });
    const second = await toolsetOf(changing('Acts.'), tempDir(), dataDir);
    expect(actOf(second).approvalOverride?.({ changing__act: 'never' })).toBe('never');
  }, TEST_TIMEOUT);

  it('approving one call to a changed definition (even by --approve auto) leaves the setting stale: the next run asks again', async () => {
    const dataDir = tempDir();
    const first = await toolsetOf(changing('Acts.'), tempDir(), dataDir);
    first.store.updateSettings({ toolApproval: { changing__act: 'never' } });
    const changed = await toolsetOf(changing('Acts, and deletes everything else.'), tempDir(), dataDir);
    expect(actOf(changed).approvalOverride?.({ changing__act: 'never' })).toBe('always');
    const engine = await startEngine(
      {
        reply: (request) => {
          if (request.purpose === 'plan') return planReply([{ id: 'act', description: 'act once' }]);
          if (request.purpose === 'final') return { content: 'done' };
          return toolMessagesOf(request).length === 0 ? { toolCalls: [{ name: 'changing__act', arguments: { what: 'approved once' } }] } : { content: 'acted' };
        },
      },
      { tools: () => new ToolRegistry(changed.tools) },
    );
    expect((await engine.run('act', { workspace: changed.workspace })).status).toBe('completed');
    expect(engine.events).toContainEqual(expect.objectContaining({ type: 'approval.requested', kind: 'tool_call' }));
    const next = await toolsetOf(changing('Acts, and deletes everything else.'), tempDir(), dataDir);
    expect(actOf(next).approvalOverride?.({ changing__act: 'never' })).toBe('always');
  }, TEST_TIMEOUT);
});

describe('elicitation: a server’s question becomes an approval of kind elicitation', () => {
  const answering = (answer: (kind: string) => 'approve' | 'edit' | 'reject'): ApprovalChannel => ({
    canRaiseBudgets: false,
    decide: async (request) => {
      const verdict = answer(request.kind);
      if (verdict === 'edit') return { verdict: 'edit', edited: { name: 'Ada Lovelace', check: true } };
      return verdict === 'approve' ? { verdict } : { verdict, feedback: 'no' };
    },
  });

  async function runElicitation(approvals: ApprovalChannel, servers: Record<string, McpServerConfig> = { everything: everythingStdio() }, tool = 'everything__trigger-elicitation-request') {
    const { tools } = await toolsetOf(servers);
    const engine = await startEngine(
      {
        reply: (request) => {
          if (request.purpose === 'plan') return planReply([{ id: 'ask', description: 'ask the operator through the server' }]);
          if (request.purpose === 'final') return { content: 'done' };
          return toolMessagesOf(request).length === 0 ? { toolCalls: [{ name: tool, arguments: {} }] } : { content: 'asked' };
        },
      },
      { tools: (builtin) => new ToolRegistry([...builtin.names().flatMap((name) => builtin.get(name) ?? []), ...tools]), approvals },
    );
    const result = await engine.run('elicit');
    const request = engine.server.requests.find((candidate) => candidate.purpose === 'step' && toolMessagesOf(candidate).length > 0);
    return { result, events: engine.events, toolMessage: toolMessagesOf(request ?? engine.server.requests[0] as never)[0] ?? '' };
  }

  it('edit with the form’s content accepts: the server gets what the operator entered', async () => {
    const { result, events, toolMessage } = await runElicitation(answering((kind) => (kind === 'elicitation' ? 'edit' : 'approve')));
    expect(result.status).toBe('completed');
    expect(events).toContainEqual(expect.objectContaining({ type: 'approval.requested', kind: 'elicitation', action: expect.objectContaining({ server: 'everything', message: expect.any(String), requestedSchema: expect.objectContaining({ type: 'object' }) }) }));
    expect(toolMessage).toContain('Ada Lovelace');
    expect(toolMessage).toMatch(/"action": "accept"/);
  }, TEST_TIMEOUT);

  it('anything else declines (as --approve auto does)', async () => {
    const { toolMessage } = await runElicitation(answering(() => 'approve'));
    expect(toolMessage).toMatch(/"action": "decline"/);
    expect(toolMessage).not.toContain('Ada Lovelace');
  }, TEST_TIMEOUT);

  it('a form field named like a credential reaches the server but is stored blanked in the approval’s decision', async () => {
    const approvals: ApprovalChannel = {
      canRaiseBudgets: false,
      decide: async (request) => (request.kind === 'elicitation' ? { verdict: 'edit', edited: { name: 'Ada', password: 'hunter2-typed' } } : { verdict: 'approve' }),
    };
    const { events, toolMessage } = await runElicitation(approvals, { eliciting: { command: process.execPath, args: [ELICITING_SERVER] } }, 'eliciting__ask');
    expect(toolMessage).toContain('hunter2-typed');
    const resolved = events.filter((event) => event.type === 'approval.resolved');
    expect(resolved).toContainEqual(expect.objectContaining({ decision: { verdict: 'edit', edited: { name: 'Ada', password: '[redacted]' } } }));
    expect(JSON.stringify(resolved)).not.toContain('hunter2-typed');
  }, TEST_TIMEOUT);
});
