import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { WalSync } from '../../../src/core/store/wal-sync';
import { useTempDirs } from '../../support/temp-dir';
import { rejectionOf } from '../../support/archon-errors';

const tempDir = useTempDirs();


describe('group commit (WalSync)', () => {
  it('gives a burst of callers one flush, and a caller that comes once it has started the next one, which ends after it', async () => {
    const store = ArchonStore.open(tempDir());
    const sync = new WalSync(`${store.file}-wal`);
    try {
      store.db.prepare("INSERT INTO settings (key, value_json) VALUES ('a', '1')").run();
      const burst = [sync.sync(), sync.sync(), sync.sync()];
      expect(new Set(burst).size).toBe(1);
      await Promise.resolve();
      const later = sync.sync();
      expect(later).not.toBe(burst[0]);
      const order: string[] = [];
      await Promise.all([burst[0]?.then(() => order.push('burst')), later.then(() => order.push('later'))]);
      expect(order).toEqual(['burst', 'later']);
    } finally {
      sync.close();
      store.close();
    }
  });

  it('commits a grouped write at once: another connection reads it before its flush has ended', async () => {
    const store = ArchonStore.open(tempDir());
    try {
      const flushed = store.durable.grouped(() => store.db.prepare("INSERT INTO settings (key, value_json) VALUES ('b', '2')").run());
      const reader = new Database(store.file, { readonly: true });
      expect(reader.prepare("SELECT value_json FROM settings WHERE key = 'b'").get()).toEqual({ value_json: '2' });
      reader.close();
      await flushed;
    } finally {
      store.close();
    }
  });

  it('says the disk is failing when the WAL cannot be flushed, and tries again on the next call; no WAL means nothing to flush', async () => {
    const dir = tempDir();
    const notAFile = join(dir, 'archon.db-wal');
    mkdirSync(notAFile);
    const sync = new WalSync(notAFile);
    const first = await rejectionOf(sync.sync());
    expect(first.code).toBe('DISK_FULL');
    expect(first.message).toMatch(/full or failing \(flushing .*archon\.db-wal: .*\)\. Free some space, then resume the run/);
    expect((await rejectionOf(sync.sync())).code).toBe('DISK_FULL');
    sync.close();
    const missing = new WalSync(join(dir, 'none.db-wal'));
    await expect(missing.sync()).resolves.toBeUndefined();
    missing.close();
  });

  it('refuses to promise a flush once closed', async () => {
    const store = ArchonStore.open(tempDir());
    const sync = new WalSync(`${store.file}-wal`);
    sync.close();
    expect((await rejectionOf(sync.sync())).code).toBe('STORE_FAILED');
    store.close();
  });
});
