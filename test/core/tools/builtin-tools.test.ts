import { describe, expect, it } from 'vitest';
import { asksForTool } from '../../../src/shared/policy';
import { builtinTools } from '../../../src/core/tools/builtin-tools';
import type { ApprovalChannel } from '../../../src/core/approval/approval-channel';
import type { ApprovalRequest } from '../../../src/shared/schemas/approval';
import { planReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';
import { processesMatching, uniqueSleepSeconds } from '../../support/processes';
import { useTempDirs } from '../../support/temp-dir';
import { catalogueTools, usePools } from '../../support/tools';

const tempDir = useTempDirs();
const openPool = usePools();
const startEngine = useEngine();

describe('built-in tools', () => {
  it('declare side effects and idempotency as the approval gate expects', () => {
    const tools = catalogueTools();
    const declared = Object.fromEntries(tools.names().map((name) => [name, [tools.get(name)?.sideEffects, tools.get(name)?.idempotent]]));
    expect(declared).toEqual({
      calculator: ['none', true],
      list_files: ['none', true],
      read_file: ['none', true],
      search_files: ['none', true],
      write_file: ['reversible', true],
      run_command: ['irreversible', false],
      http_get: ['irreversible', false],
    });
  });

  it('leave out the tools the operator disabled', () => {
    const pool = openPool(tempDir());
    expect(builtinTools(pool, { disabledTools: ['run_command', 'http_get'] }).names()).toEqual(['calculator', 'list_files', 'read_file', 'write_file', 'search_files']);
  });

  it('give run_command the timeout the call asks for (timeout_s), through the registry', async () => {
    const tools = builtinTools(openPool(tempDir()));
    const seconds = uniqueSleepSeconds();
    const prepared = tools.prepare('run_command', { command: `sleep ${seconds}`, timeout_s: 1 });
    if (!prepared.ok) throw new Error(prepared.result.content);
    const result = await tools.execute(prepared.tool, prepared.args, { signal: new AbortController().signal, workspace: '/', runId: 'r', stepId: 's', callId: 'c' });
    expect(result.status).toBe('timeout');
    expect(processesMatching(`sleep ${seconds}`)).toEqual([]);
  });

  it('are asked for by policy and side effects, unless the operator overrides it per tool', () => {
    const tools = catalogueTools();
    const [calculator, write, command] = ['calculator', 'write_file', 'run_command'].map((name) => tools.get(name));
    if (!calculator || !write || !command) throw new Error('missing tools');
    const asks = (policy: 'supervised' | 'strict' | 'balanced' | 'permissive', override?: 'always' | 'never' | 'default') =>
      [calculator, write, command].map((tool) => asksForTool(policy, tool, override));
    expect(asks('supervised')).toEqual([true, true, true]);
    expect(asks('strict')).toEqual([true, true, true]);
    expect(asks('balanced')).toEqual([false, true, true]);
    expect(asks('permissive')).toEqual([false, false, true]);
    expect(asks('permissive', 'never')).toEqual([false, false, false]);
    expect(asks('permissive', 'always')).toEqual([true, true, true]);
    expect(asks('balanced', 'default')).toEqual([false, true, true]);
  });

  it('with the sandbox off, mark run_command unconfined: asked for under every policy, even when set to never ask', () => {
    const tools = builtinTools(openPool(tempDir()), { sandbox: 'off' });
    const command = tools.get('run_command');
    if (!command) throw new Error('missing run_command');
    expect(tools.names().filter((name) => tools.get(name)?.unconfined)).toEqual(['run_command']);
    for (const policy of ['supervised', 'strict', 'balanced', 'permissive'] as const) {
      for (const override of [undefined, 'never', 'default'] as const) expect(asksForTool(policy, command, override), `${policy} ${override}`).toBe(true);
    }
    const confined = builtinTools(openPool(tempDir()));
    expect(confined.names().filter((name) => confined.get(name)?.unconfined)).toEqual([]);
  });

  it('with the sandbox off, the approval request says the command runs unconfined', async () => {
    const requests: ApprovalRequest[] = [];
    const recording: ApprovalChannel = { canRaiseBudgets: false, decide: async (request) => (requests.push(request), { verdict: 'approve' }) };
    const workspace = tempDir();
    const engine = await startEngine(
      { reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'cmd', description: 'run', tool: 'run_command', args: { command: 'echo hi' } }]) : { content: 'done' }) },
      { tools: () => builtinTools(openPool(workspace), { sandbox: 'off' }), approvals: recording },
    );
    await engine.run('run it', { policy: 'permissive' });
    expect(requests.find((request) => request.kind === 'tool_call')?.summary).toMatch(/^unconfined \(no OS sandbox\) run_command/);
  });
});
