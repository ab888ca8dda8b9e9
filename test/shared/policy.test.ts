import { describe, expect, it } from 'vitest';
import { grantsForRun } from '../../src/shared/policy';

describe('approve all like this for this run', () => {
  it.each([
    ['permissive', 'irreversible', true],
    ['balanced', 'irreversible', true],
    ['balanced', 'reversible', true],
    ['strict', 'reversible', true],
    ['strict', 'irreversible', false],
    ['supervised', 'irreversible', false],
  ] as const)('under %s, a %s tool: %s', (policy, sideEffects, allowed) => {
    expect(grantsForRun(policy, { sideEffects })).toBe(allowed);
  });

  it('never covers a tool running unconfined (the sandbox turned off)', () => {
    expect(grantsForRun('permissive', { sideEffects: 'irreversible', unconfined: true })).toBe(false);
  });
});
