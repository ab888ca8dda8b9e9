import { describe, expect, it } from 'vitest';
import { toolCallNeedsApproval } from '../../../src/core/approval/approval-gate';
import { builtinTools } from '../../../src/core/tools/builtin-tools';
import { processesMatching, uniqueSleepSeconds } from '../../support/processes';
import { useTempDirs } from '../../support/temp-dir';
import { catalogueTools, usePools } from '../../support/tools';

const tempDir = useTempDirs();
const openPool = usePools();

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
    expect(builtinTools(pool, ['run_command', 'http_get']).names()).toEqual(['calculator', 'list_files', 'read_file', 'write_file', 'search_files']);
  });

  it('give run_command the timeout the call asks for (timeout_s), through the registry', async () => {
    const tools = builtinTools(openPool(tempDir()));
    const seconds = uniqueSleepSeconds();
    const prepared = tools.prepare('run_command', { command: `sleep ${seconds}`, timeout_s: 1 });
    if (!prepared.ok) throw new Error(prepared.result.content);
    const started = Date.now();
    const result = await tools.execute(prepared.tool, prepared.args, { signal: new AbortController().signal, workspace: '/', runId: 'r', stepId: 's' });
    expect(result.status).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(processesMatching(`sleep ${seconds}`)).toEqual([]);
  });

  it('ask for approval by side effects unless the operator overrides it per tool', () => {
    const tools = catalogueTools();
    const calculator = tools.get('calculator');
    const write = tools.get('write_file');
    if (!calculator || !write) throw new Error('missing tools');
    expect([toolCallNeedsApproval(calculator, undefined), toolCallNeedsApproval(write, undefined)]).toEqual([false, true]);
    expect([toolCallNeedsApproval(calculator, 'always'), toolCallNeedsApproval(write, 'never'), toolCallNeedsApproval(write, 'default')]).toEqual([true, false, true]);
  });
});
