import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, ToolRegistry, toolResult } from '../../../src/core/tools/tool-registry';

const named = (name: string, answer: string) =>
  defineTool({ name, description: answer, input: z.object({}), sideEffects: 'none', idempotent: true, timeoutMs: 1000, run: async () => toolResult('success', answer) });

describe('ToolRegistry', () => {
  it('refuses two tools of one name rather than let a call reach whichever came last', () => {
    expect(() => new ToolRegistry([named('srv__x', 'first'), named('srv__x', 'second')])).toThrow(/Two tools are both named srv__x/);
    expect(new ToolRegistry([named('srv__x', 'first'), named('srv__y', 'second')]).names()).toEqual(['srv__x', 'srv__y']);
  });
});
