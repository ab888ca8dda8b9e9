import { describe, expect, it } from 'vitest';
import { adaptPolicy } from '../../../src/core/approval/policy';

const unmeasured = { complexity: null, risk: null, trust: null, uncertainty: null, knowledge: null };

describe('adaptive autonomy', () => {
  it('keeps the chosen policy when nothing could be measured', () => {
    expect(adaptPolicy('permissive', unmeasured)).toEqual({ policy: 'permissive', reasons: [] });
  });

  it('averages only the measured signals: one strict signal alone calls for supervised, and the others are named as left out', () => {
    const adapted = adaptPolicy('permissive', { ...unmeasured, trust: 0.9 });
    expect(adapted.policy).toBe('supervised');
    expect(adapted.reasons).toEqual(['high: trust 0.90', 'average 0.90 of trust', 'not measured (left out): complexity, risk, uncertainty, knowledge']);
  });

  it('lets calm measured signals temper a strict one instead of unmeasured ones counting as strict', () => {
    const adapted = adaptPolicy('permissive', { complexity: 0.05, risk: 1, trust: 0, uncertainty: null, knowledge: null });
    expect(adapted.policy).toBe('balanced');
    expect(adapted.reasons[0]).toBe('high: risk 1.00');
    expect(adapted.reasons[2]).toBe('not measured (left out): uncertainty, knowledge');
  });

  it('never loosens the policy and needs a strict signal as evidence', () => {
    expect(adaptPolicy('supervised', { complexity: 0, risk: 0, trust: 0, uncertainty: 0, knowledge: null }).policy).toBe('supervised');
    expect(adaptPolicy('permissive', { complexity: 0.7, risk: 0.7, trust: 0.7, uncertainty: 0.7, knowledge: null }).policy).toBe('permissive');
  });

  it("tightens on a large plan's size alone at most to strict; with other strict evidence it may go to supervised", () => {
    const large = adaptPolicy('balanced', { ...unmeasured, complexity: 1, risk: 0 });
    expect(large.policy).toBe('balanced');
    const sizeOnly = adaptPolicy('balanced', { ...unmeasured, complexity: 1 });
    expect(sizeOnly.policy).toBe('strict');
    expect(sizeOnly.reasons[0]).toBe('high: complexity 1.00');
    expect(adaptPolicy('balanced', { ...unmeasured, complexity: 1, trust: 0.9 }).policy).toBe('supervised');
    expect(adaptPolicy('supervised', { ...unmeasured, complexity: 1 }).policy).toBe('supervised');
  });
});
