import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../../src/shared/schemas/settings';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

describe('ArchonStore', () => {
  it('latches and re-arms the emergency stop, and the latch survives reopening', () => {
    const dir = tempDir();
    const store = ArchonStore.open(dir);
    expect(store.estopState().latched).toBe(false);
    store.recordEstop('trigger', 'cli', 'test stop', '2026-11-21T10:00:00.000Z');
    store.close();

    const reopened = ArchonStore.open(dir);
    expect(reopened.estopState()).toEqual({ latched: true, since: '2026-11-21T10:00:00.000Z', triggeredBy: 'cli', reason: 'test stop' });
    expect(reopened.recordEstop('reset', null, 're-armed', '2026-11-21T10:01:00.000Z').latched).toBe(false);
    reopened.close();
  });

  it('returns defaults, applies patches, and ignores a stored value that no longer validates', () => {
    const store = ArchonStore.open(tempDir());
    try {
      expect(store.getSettings()).toEqual(DEFAULT_SETTINGS);
      expect(store.updateSettings({ model: 'llama3.1', theme: 'dark' })).toEqual({ ...DEFAULT_SETTINGS, model: 'llama3.1', theme: 'dark' });
      store.db.prepare("UPDATE settings SET value_json = '\"purple\"' WHERE key = 'theme'").run();
      store.db.prepare("INSERT INTO settings (key, value_json) VALUES ('policy', 'not json')").run();
      expect(store.getSettings()).toEqual({ ...DEFAULT_SETTINGS, model: 'llama3.1' });
      // One setting read alone is the same as in the whole set.
      expect([store.getSetting('model'), store.getSetting('theme'), store.getSetting('policy'), store.getSetting('memoryMaxItems')]).toEqual(['llama3.1', DEFAULT_SETTINGS.theme, DEFAULT_SETTINGS.policy, DEFAULT_SETTINGS.memoryMaxItems]);
      store.updateSettings({ memoryMaxItems: 500 });
      expect(store.getSetting('memoryMaxItems')).toBe(500);
    } finally {
      store.close();
    }
  });

  it('lists runs newest first', () => {
    const store = ArchonStore.open(tempDir());
    try {
      const insert = store.db.prepare("INSERT INTO runs (id, goal, status, policy, created_at, updated_at) VALUES (?, ?, 'completed', 'balanced', ?, ?)");
      insert.run('a', 'first', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z');
      insert.run('b', 'second', '2026-01-02T00:00:00Z', '2026-01-02T00:00:00Z');
      expect(store.runs.listRuns(10).map((run) => run.goal)).toEqual(['second', 'first']);
      expect(store.runs.listRuns(1)).toHaveLength(1);
    } finally {
      store.close();
    }
  });

  it('keeps events append-only', () => {
    const store = ArchonStore.open(tempDir());
    try {
      store.db.prepare("INSERT INTO runs (id, goal, status, policy, created_at, updated_at) VALUES ('r', 'g', 'running', 'balanced', 'now', 'now')").run();
      store.appendEvents([{ type: 'step.started', runId: 'r', seq: 1, ts: 'now', stepId: 's1' }]);
      expect(() => store.db.prepare("UPDATE events SET type = 'x'").run()).toThrow(/append-only/);
    } finally {
      store.close();
    }
  });
});
