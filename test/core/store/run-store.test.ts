import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../src/shared/schemas/events';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

function validation(seq: number, stepId: string | null, confidence: number | null): RunEvent {
  return { type: 'validation.completed', runId: 'r', seq, ts: 'now', stepId, verdict: 'pass', gap: 0, confidence, reasons: [], checks: [] };
}

function openWithRun(): ArchonStore {
  const store = ArchonStore.open(tempDir());
  store.db.prepare("INSERT INTO runs (id, goal, status, policy, created_at, updated_at) VALUES ('r', 'g', 'running', 'balanced', 'now', 'now')").run();
  return store;
}

describe('RunStore', () => {
  it("reads a step's validator confidences, and the run's, through their index: an approval packet costs the same at step 1,000 as at step 1", () => {
    const store = openWithRun();
    try {
      store.appendEvents([
        validation(1, 's1', 0.4),
        { type: 'step.started', runId: 'r', seq: 2, ts: 'now', stepId: 's1' },
        validation(3, 's2', 0.9),
        validation(4, 's1', 0.7),
        validation(5, 's1', null),
        validation(6, null, 0.5),
      ]);
      expect(store.runs.confidences('r', 's1')).toEqual([0.4, 0.7]);
      expect(store.runs.confidences('r', 's3')).toEqual([]);
      expect(store.runs.confidences('r', null)).toEqual([0.4, 0.9, 0.7, 0.5]);

      const plan = (sql: string) => (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((step) => step.detail);
      const read = "SELECT json_extract(body_json, '$.confidence') FROM events INDEXED BY events_validation WHERE run_id = 'r' AND type = 'validation.completed'";
      expect(plan(`${read} AND json_extract(body_json, '$.stepId') = 's1' ORDER BY seq`)).toEqual(['SEARCH events USING INDEX events_validation (run_id=? AND <expr>=?)']);
      expect(plan(`${read} ORDER BY seq`)).toEqual(['SEARCH events USING INDEX events_validation (run_id=?)', 'USE TEMP B-TREE FOR ORDER BY']);
    } finally {
      store.close();
    }
  });

  it("writes a call's end with its result: the processes it started are no longer listed for a later process to kill", async () => {
    const store = openWithRun();
    try {
      store.db.prepare("INSERT INTO steps (run_id, id, position, spec_json, status) VALUES ('r', 'a', 0, '{}', 'running')").run();
      for (const id of ['c1', 'c2']) {
        await store.runs.startToolCall({ id, runId: 'r', stepId: 'a', tool: 'run_command', args: {}, sideEffects: 'none', idempotent: true, now: 'now' });
        store.runs.recordToolProcess({ runId: 'r', callId: id, pgid: id === 'c1' ? 101 : 102, startTicks: null });
      }
      store.runs.finishToolCall({ runId: 'r', id: 'c1' }, { status: 'success', content: 'ok', metadata: {} }, 'later');
      expect(store.runs.toolCall('c1')?.result?.content).toBe('ok');
      expect(store.runs.toolProcesses('r')).toEqual([{ callId: 'c2', pgid: 102, startTicks: null }]);
    } finally {
      store.close();
    }
  });

  it('records a model attempt and its charge to the ledger together, or throws at once', async () => {
    const store = openWithRun();
    try {
      const attempt = { runId: 'r', stepId: null, purpose: 'plan', attempt: 1, ok: true, promptTokens: 30, completionTokens: 12, estimated: false, error: null, startedAt: 'now', endedAt: 'now' };
      await store.runs.recordModelAttempt({ ...attempt, id: 'm1' }, { tokens: 42, costUsd: 0.5 });
      await store.runs.recordModelAttempt({ ...attempt, id: 'm2', ok: false, error: 'timed out' }, { tokens: 0, costUsd: 0 });
      expect(store.runs.spending('r', '')).toMatchObject({ tokens: 42, costUsd: 0.5, modelCalls: 2 });
      expect(store.db.prepare('SELECT kind, tokens FROM budget_ledger ORDER BY id').all()).toEqual([{ kind: 'model_call', tokens: 42 }, { kind: 'model_call', tokens: 0 }]);
      // A write that fails throws at once, before any flush: the model client stops rather than retry a call it cannot record.
      expect(() => store.runs.recordModelAttempt({ ...attempt, id: 'm1' }, { tokens: 7, costUsd: 0 })).toThrow(/UNIQUE/);
      expect(store.runs.spending('r', '')).toMatchObject({ tokens: 42, modelCalls: 2 });
    } finally {
      store.close();
    }
  });

  it("appends a step's turns at consecutive positions, several in one write", () => {
    const store = openWithRun();
    try {
      store.db.prepare("INSERT INTO steps (run_id, id, position, spec_json, status) VALUES ('r', 'a', 0, '{}', 'running')").run();
      const key = { runId: 'r', stepId: 'a', attempt: 1 };
      store.runs.appendTurns(key, 0, [{ role: 'system', content: 'rules' }, { role: 'user', content: 'task' }]);
      store.runs.appendTurns(key, 2, [{ role: 'assistant', content: 'done' }]);
      expect(store.runs.turns('r', 'a', 1).map((turn) => turn.content)).toEqual(['rules', 'task', 'done']);
      expect(() => store.runs.appendTurns(key, 2, [{ role: 'user', content: 'again' }, { role: 'user', content: 'twice' }])).toThrow(/UNIQUE/);
      expect(store.runs.turns('r', 'a', 1)).toHaveLength(3);
    } finally {
      store.close();
    }
  });

  it('lands writes made together in one transaction, or none of them', () => {
    const store = openWithRun();
    try {
      expect(store.runs.together(() => (store.runs.putFact('r', 'a', '1', 'now'), store.runs.putFact('r', 'b', '2', 'now'), 'both'))).toBe('both');
      expect(() => store.runs.together(() => (store.runs.putFact('r', 'c', '3', 'now'), (() => { throw new Error('disk full'); })()))).toThrow('disk full');
      expect(['a', 'b', 'c'].map((key) => store.runs.fact('r', key))).toEqual(['1', '2', null]);
    } finally {
      store.close();
    }
  });
});
