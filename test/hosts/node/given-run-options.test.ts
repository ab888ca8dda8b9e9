import { describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import { BUILTIN_MODEL_URL } from '../../../src/shared/model-presets';
import { DEFAULT_SETTINGS } from '../../../src/shared/schemas/settings';
import { givenRunOptions, runOptionsFromFlags } from '../../../src/hosts/node/run-command';

describe('run flags as run options', () => {
  it('are only what was typed, so a resume keeps the rest of its own options', () => {
    expect(givenRunOptions({ policy: 'strict', workspace: 'here', memory: false })).toEqual({ policy: 'strict', workspace: resolve('here'), memory: false });
    expect(givenRunOptions({})).toEqual({});
  });

  it("make the built-in engine's model file a whole path, and leave other servers' model names as typed", () => {
    expect(givenRunOptions({ modelUrl: 'builtin', model: 'models/tiny.gguf' })).toMatchObject({ modelUrl: BUILTIN_MODEL_URL, model: resolve('models/tiny.gguf') });
    expect(givenRunOptions({ modelUrl: 'builtin', model: 'qwen2.5-1.5b' }).model).toBe('qwen2.5-1.5b');
    expect(givenRunOptions({ modelUrl: 'vllm', model: 'Qwen/Qwen2.5-7B-Instruct' }).model).toBe('Qwen/Qwen2.5-7B-Instruct');
  });

  it('take the run token cap from a budget preset unless --max-tokens gives one', () => {
    expect(givenRunOptions({ budgetPreset: 'small' }).maxTokens).toBe(2000);
    expect(givenRunOptions({ budgetPreset: 'small', maxTokens: 700 }).maxTokens).toBe(700);
  });

  it('win over Settings for a new run, Settings over the defaults', () => {
    const options = runOptionsFromFlags({ ...DEFAULT_SETTINGS, policy: 'strict', maxPlanSteps: 20 }, { modelUrl: 'vllm', maxSteps: 5 });
    expect(options).toMatchObject({ modelUrl: 'http://127.0.0.1:8000/v1', maxPlanSteps: 5, policy: 'strict', maxIterations: 10 });
  });

  it("take the engine from Settings' cluster unless --engine says otherwise: local brings the calls back to this machine", () => {
    const cluster = { ingress: 'http://desk.lan:8080', admin: 'http://desk.lan:9070', secretFile: '/etc/archon/cluster-secret' };
    const settings = { ...DEFAULT_SETTINGS, cluster };
    expect(runOptionsFromFlags(settings, {}).cluster).toEqual(cluster);
    expect(runOptionsFromFlags(settings, { engine: 'local' }).cluster).toBeNull();
    expect(runOptionsFromFlags(settings, { engine: 'restate', restateIngress: 'http://other:8080', clusterSecretFile: '/s' }).cluster).toMatchObject({ ingress: 'http://other:8080', secretFile: resolve('/s') });
    expect(runOptionsFromFlags(DEFAULT_SETTINGS, {}).cluster).toBeUndefined();
  });
});
