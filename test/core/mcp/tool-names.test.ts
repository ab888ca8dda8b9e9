import { describe, expect, it } from 'vitest';
import { MAX_TOOL_NAME, registeredToolNames } from '../../../src/core/mcp/tool-names';

describe('registeredToolNames', () => {
  it('keeps SERVER__TOOL when it fits, and cuts or cleans the others deterministically, never giving two tools one name', () => {
    const long = 'a'.repeat(80);
    const tools = ['echo', 'get.sum', 'get_sum', long, `${long}b`, 'ünïcode tool'];
    const names = registeredToolNames('srv', tools);
    expect(names.get('echo')).toBe('srv__echo');
    expect(names.get('get_sum')).toBe('srv__get_sum');
    expect(names.get('get.sum')).toMatch(/^srv__get_sum_[0-9a-f]{8}$/);
    for (const name of names.values()) {
      expect(name.length).toBeLessThanOrEqual(MAX_TOOL_NAME);
      expect(name).toMatch(/^[A-Za-z0-9_-]+$/);
    }
    expect(new Set(names.values()).size).toBe(tools.length);
    expect(registeredToolNames('srv', [...tools].reverse())).toEqual(names);
  });
});
