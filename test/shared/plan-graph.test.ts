import { describe, expect, it } from 'vitest';
import { DOWNSTREAM_SHOWN, planIndex } from '../../src/shared/plan-graph';
import type { PlanStep } from '../../src/shared/schemas/plan';

const step = (id: string, dependencies: string[] = []): PlanStep => ({ id, description: `do ${id}`, dependencies });
const chain = (length: number) => ({ steps: Array.from({ length }, (_, index) => step(`s${index}`, index === 0 ? [] : [`s${index - 1}`])) });

describe('plan index', () => {
  it('finds everything downstream of a step, nearest first, and nothing upstream or beside it', () => {
    const plan = { steps: [step('a'), step('b', ['a']), step('c', ['b']), step('d'), step('e', ['a', 'c'])] };
    expect(planIndex(plan).downstreamOf('a')).toEqual(['b', 'e', 'c']);
    expect(planIndex(plan).downstreamOf('d')).toEqual([]);
  });

  it("names at most the first 10 of a 1,000-step chain's downstream steps and counts them all exactly", () => {
    const summary = planIndex(chain(1000)).downstreamSummary('s0');
    expect(summary.downstream).toEqual(Array.from({ length: DOWNSTREAM_SHOWN }, (_, index) => `s${index + 1}`));
    expect(summary.downstreamCount).toBe(999);
    expect(planIndex(chain(1000)).downstreamSummary('s990')).toEqual({ downstream: Array.from({ length: 9 }, (_, index) => `s${index + 991}`), downstreamCount: 9 });
  });

  it('is built once per plan revision: the same steps give the same index, a revised plan a new one', () => {
    const plan = chain(3);
    expect(planIndex(plan)).toBe(planIndex({ ...plan }));
    const revised = { steps: [...plan.steps, step('s3', ['s2'])] };
    expect(planIndex(revised)).not.toBe(planIndex(plan));
    expect(planIndex(revised).downstreamOf('s0')).toEqual(['s1', 's2', 's3']);
  });

  it('measures its widest level in one pass: leaves, a diamond, a chain', () => {
    expect(planIndex({ steps: [] }).widestLevel()).toBe(0);
    expect(planIndex({ steps: [step('a'), step('b'), step('c')] }).widestLevel()).toBe(3);
    expect(planIndex({ steps: [step('a'), step('b', ['a']), step('c', ['a']), step('d', ['a']), step('e', ['b', 'c', 'd'])] }).widestLevel()).toBe(3);
    expect(planIndex(chain(1000)).widestLevel()).toBe(1);
  });
});
