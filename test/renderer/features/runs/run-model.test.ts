import { describe, expect, it } from 'vitest';
import { describeModel } from '../../../../src/renderer/src/features/runs/run-model';
import type { RunEvent } from '../../../../src/shared/schemas/events';

const probed: RunEvent = { type: 'model.probed', runId: 'r', seq: 2, ts: 'now', model: 'qwen3', toolCalling: false, streaming: true, reason: 'the server refused tools', contextLength: 8192, contextSource: 'llama.cpp /props n_ctx', parallelSlots: 2 };

describe('the run header says what the model is and how it writes tool calls', () => {
  it('shows the probe, then the dialect the run detected', () => {
    expect(describeModel([])).toBeNull();
    expect(describeModel([probed])).toBe('qwen3: text protocol; context 8192 tokens (llama.cpp /props n_ctx); parallel slots 2 — the server refused tools');
    const detected: RunEvent = { type: 'model.dialect_detected', runId: 'r', seq: 3, ts: 'now', dialect: 'hermes' };
    expect(describeModel([probed, detected])).toContain('; writes tool calls as hermes');
  });
});
