import { describe, expect, it } from 'vitest';
import { BudgetMeter, type BudgetCaps } from '../../../src/core/budget/budget-meter';

const free = { inputPerMillion: 0, outputPerMillion: 0, known: true };
const caps = (maxTokens: number | null): BudgetCaps => ({ maxTokens, maxCostUsd: null, dayMaxTokens: null, dayMaxCostUsd: null, maxModelCalls: 100, maxToolCalls: 100 });
const unspent = () => ({ tokens: 0, costUsd: 0, dayTokens: 0, dayCostUsd: 0, modelCalls: 0, toolCalls: 0 });
const usage = (tokens: number) => ({ promptTokens: tokens, completionTokens: 0, estimated: false });

describe("a sub-agent's budget under its parent's", () => {
  it("is carved from what the parent has left, charges the parent too, and a breach of the parent's cap is raised on the parent", () => {
    const parent = new BudgetMeter(caps(1000), unspent(), free);
    parent.charge(usage(200));
    const carved = parent.remaining();
    expect(carved).toEqual({ maxTokens: 800, maxCostUsd: null });
    const child = new BudgetMeter(caps(carved.maxTokens), unspent(), free, parent);

    child.charge(usage(300));
    expect(parent.totals.tokens).toBe(500);
    expect(child.check(600)).toEqual({ cap: 'tokens', message: expect.not.stringContaining('parent') as string });
    expect(child.check(350)).toBeNull();

    parent.charge(usage(300));
    const breach = child.check(250);
    expect(breach).toMatchObject({ cap: 'tokens', above: 1, message: expect.stringContaining("the parent run's cap") as string });
    expect(child.proposedRaise('tokens', breach?.above)).toBe(2000);
    child.raise('tokens', 2000, breach?.above);
    expect(parent.limits.maxTokens).toBe(2000);
    expect(child.limits.maxTokens).toBe(800);
    expect(child.check(250)).toBeNull();
  });

  it("reserves on the parent while a child's call is in flight", () => {
    const parent = new BudgetMeter(caps(1000), unspent(), free);
    const child = new BudgetMeter(caps(1000), unspent(), free, parent);
    const reservation = child.reserve(700);
    expect(parent.check(400)).toMatchObject({ cap: 'tokens' });
    expect(child.callsInFlight()).toBe(1);
    child.release(reservation);
    expect(parent.check(400)).toBeNull();
    expect(parent.callsInFlight()).toBe(0);
  });
});
