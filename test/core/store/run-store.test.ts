import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../src/shared/schemas/events';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

function validation(seq: number, stepId: string | null, confidence: number | null): RunEvent {
  return { type: 'validation.completed', runId: 'r', seq, ts: 'now', stepId, verdict: 'pass', gap: 0, confidence, reasons: [], checks: [] };
}

describe('RunStore', () => {
  it("reads a step's validator confidences, and the run's, through their index: an approval packet costs the same at step 1,000 as at step 1", () => {
    const store = ArchonStore.open(tempDir());
    try {
      store.db.prepare("INSERT INTO runs (id, goal, status, policy, created_at, updated_at) VALUES ('r', 'g', 'running', 'balanced', 'now', 'now')").run();
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
});
