import { describe, expect, it } from 'vitest';
import { MAX_TOOL_NAME, registeredToolNames } from '../../../src/core/mcp/tool-names';
import { McpServerNameSchema } from '../../../src/shared/schemas/settings';

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

  it('never gives an MCP tool a name a built-in tool has', () => {
    expect(registeredToolNames('srv', ['x', 'y'], ['srv__x']).get('x')).toMatch(/^srv__x_[0-9a-f]{8}$/);
    expect(registeredToolNames('srv', ['x', 'y'], ['srv__x']).get('y')).toBe('srv__y');
  });

  it('server names that could make two servers’ tools share a name are refused, saying why', () => {
    // a + "__b__c" and "a__b" + "c" would both be a__b__c; "a_" + "_b" and "a" + "__b" both a____b.
    for (const name of ['a__b', 'a_']) {
      const parsed = McpServerNameSchema.safeParse(name);
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.message).toMatch(/may not contain "__" or end in "_".*SERVER__TOOL.*rename/);
    }
    expect(McpServerNameSchema.safeParse('my_server-2').success).toBe(true);
  });
});
