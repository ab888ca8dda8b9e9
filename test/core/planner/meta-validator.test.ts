import { describe, expect, it } from 'vitest';
import { metaValidate } from '../../../src/core/planner/meta-validator';
import { RoleRegistry } from '../../../src/core/roles/role-registry';
import type { PlanStep } from '../../../src/shared/schemas/plan';

const step = (id: string, description: string, extra: Partial<PlanStep> = {}): PlanStep => ({ id, description, dependencies: [], expected_output: `${id} out`, ...extra });

describe('Meta-Validator', () => {
  it('passes plans of independent branches: parallel steps are not orphans', () => {
    const branches = metaValidate({ goal: 'g', steps: [step('a', 'weather in Paris'), step('b', 'weather in Rome'), step('c', 'compare', { dependencies: ['a', 'b'] }), step('d', 'news of the day'), step('e', 'sum up the news', { dependencies: ['d'] })] });
    expect(branches).toMatchObject({ verdict: 'pass', gap: 0, reasons: [] });
    expect(metaValidate({ goal: 'g', steps: [step('a', 'weather in Paris'), step('b', 'weather in Rome')] }).verdict).toBe('pass');
  });

  it('flags a step that bypasses the one final step the plan converges on', () => {
    const verdict = metaValidate({ goal: 'g', steps: [step('a', 'weather in Paris'), step('b', 'weather in Rome'), step('c', 'compare', { dependencies: ['a', 'b'] }), step('d', 'news of the day')] });
    expect(verdict.reasons).toEqual(['Step "d" is linked to no other step; its result does not reach the final step "c".']);
  });

  it('finds two steps making the same tool call, and says which', () => {
    const verdict = metaValidate({ goal: 'g', steps: [step('a', 'add', { tool: 'calculator', args: { expression: '1+1' } }), step('b', 'sum', { tool: 'calculator', args: { expression: '1+1' } })] });
    expect(verdict).toMatchObject({ verdict: 'fail', gap: 0.2, reasons: ['Steps "a" and "b" do the same thing.'] });
  });

  it('notes a role no one defined without failing the plan: its step runs as executor', () => {
    const verdict = metaValidate({ goal: 'g', steps: [step('a', 'weather in Paris', { role: 'meteorologist' }), step('b', 'weather in Rome')] }, new RoleRegistry());
    expect(verdict).toMatchObject({ verdict: 'pass', gap: 0, reasons: ['Step "a" names the role "meteorologist", which is not defined; it runs as executor.'] });
    expect(verdict.checks.at(-1)).toEqual({ name: 'roles', passed: true, detail: 'Step "a" names the role "meteorologist", which is not defined; it runs as executor.' });
  });
});
