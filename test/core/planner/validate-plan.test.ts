import { describe, expect, it } from 'vitest';
import type { Plan } from '../../../src/shared/schemas/plan';
import { validatePlan } from '../../../src/core/planner/validate-plan';
import { catalogueTools } from '../../support/tools';

const step = (id: string, dependencies: string[] = [], extra: object = {}) => ({ id, description: `do ${id}`, dependencies, ...extra });
const plan = (...steps: Plan['steps']): Plan => ({ goal: 'g', steps });

describe('validatePlan', () => {
  it('accepts a DAG', () => {
    expect(validatePlan(plan(step('a'), step('b'), step('c', ['a', 'b'])), catalogueTools())).toEqual([]);
  });

  it('names the cycle', () => {
    const errors = validatePlan(plan(step('a', ['c']), step('b', ['a']), step('c', ['b'])), catalogueTools());
    expect(errors.join(' ')).toMatch(/cycle: (a → b → c → a|b → c → a → b|c → a → b → c)/);
  });

  it('finds a step depending on itself, duplicate ids, unknown dependencies and unknown tools', () => {
    const errors = validatePlan(plan(step('a', ['a']), step('b'), step('b', ['zzz']), step('d', [], { tool: 'rm_rf' })), catalogueTools()).join(' ');
    expect(errors).toContain('cycle: a → a');
    expect(errors).toContain('Two steps have the id "b"');
    expect(errors).toContain('depends on "zzz"');
    expect(errors).toContain('names the tool "rm_rf", which does not exist. Available tools: calculator, list_files, read_file, write_file, run_command, search_files, http_get');
  });

  it('checks direct tool arguments against the tool schema', () => {
    expect(validatePlan(plan(step('a', [], { tool: 'calculator', args: { expression: 5 } })), catalogueTools()).join(' ')).toMatch(/Invalid arguments for calculator: expression/);
  });

  it('limits the size', () => {
    const many = Array.from({ length: 5 }, (_, index) => step(`s${index}`));
    expect(validatePlan(plan(...many), catalogueTools(), { maxSteps: 4 })[0]).toMatch(/5 steps; at most 4/);
  });
});
