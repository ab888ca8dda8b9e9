import { describe, expect, it } from 'vitest';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

describe('BusMessageStore', () => {
  it('finds the last message to an agent by index, not by reading the whole bus of the run (asked at every hand-off)', () => {
    const store = ArchonStore.open(tempDir());
    try {
      const plan = store.db
        .prepare("EXPLAIN QUERY PLAN SELECT seq FROM bus_messages WHERE run_id = 'r' AND to_agent = 'a' AND kind = 'task' ORDER BY seq DESC LIMIT 1")
        .all() as { detail: string }[];
      expect(plan.map((step) => step.detail)).toEqual([expect.stringMatching(/^SEARCH bus_messages USING (COVERING )?INDEX bus_messages_to \(run_id=\? AND to_agent=\? AND kind=\?\)$/)]);
    } finally {
      store.close();
    }
  });
});
