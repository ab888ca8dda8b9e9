import { describe, expect, it } from 'vitest';
import { ArchonError } from '../../../src/shared/errors';
import { DEFAULT_SETTINGS, type Settings } from '../../../src/shared/schemas/settings';
import { runOptionsFrom, runRulesFrom } from '../../../src/core/run/run-options';

const settings: Settings = { ...DEFAULT_SETTINGS, modelUrl: 'lm-studio', policy: 'strict', concurrency: 3, verification: 'critic', maxPlanSteps: 12, embeddingModel: 'nomic' };

describe('settings as run options', () => {
  it('takes each field from Settings, a preset URL resolved, and the built-in defaults for the rest', () => {
    const options = runOptionsFrom(settings);
    expect(options).toMatchObject({ modelUrl: 'http://127.0.0.1:1234/v1', policy: 'strict', concurrency: 3, verification: 'critic', maxPlanSteps: 12, embeddingModel: 'nomic', maxTokens: null, maxCostUsd: null, maxIterations: 10, workspace: process.cwd() });
    expect(options.roles).toBeUndefined();
  });

  it('lets what the host was given win field by field, and a field given as undefined leaves Settings standing', () => {
    const options = runOptionsFrom(settings, { policy: 'permissive', maxTokens: 500, concurrency: undefined, workspace: '/tmp' });
    expect(options).toMatchObject({ policy: 'permissive', maxTokens: 500, concurrency: 3, workspace: '/tmp', verification: 'critic' });
  });

  it('refuses options that are not valid with CONFIG_INVALID, naming the field', () => {
    let refused: unknown;
    try {
      runOptionsFrom(settings, { maxIterations: 0 });
    } catch (error) {
      refused = error;
    }
    expect(ArchonError.isInstance(refused) && refused.code).toBe('CONFIG_INVALID');
    expect((refused as Error).message).toMatch(/maxIterations/);
  });

  it("gives the engine Settings' rules: expiries in ms, and a day token cap the host was given over Settings'", () => {
    const rules = runRulesFrom({ ...settings, approvalExpirySeconds: { plan: 90 }, dailyMaxTokens: 50_000, dailyMaxCostUsd: 2 }, 10_000);
    expect(rules).toMatchObject({ expiryMs: { plan: 90_000 }, caps: { dayMaxTokens: 10_000, dayMaxCostUsd: 2 }, maxPlanSteps: 12, maxSubagents: settings.maxSubagents });
    expect(runRulesFrom({ ...settings, dailyMaxTokens: 50_000 }).caps.dayMaxTokens).toBe(50_000);
  });
});
