import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOG_MAX_BYTES, openLog } from '../../src/core/log';
import { canMountSmallDisk, fillDisk, useSmallDisk } from '../support/small-disk';
import { useTempDirs } from '../support/temp-dir';

const tempDir = useTempDirs();

function logLines(dataDir: string): Record<string, unknown>[] {
  return readFileSync(join(dataDir, 'logs', 'archon.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('the log file', () => {
  it('is rotated when a process opens it over the size limit', () => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, 'logs'));
    writeFileSync(join(dataDir, 'logs', 'archon.log'), 'x'.repeat(LOG_MAX_BYTES));
    openLog(dataDir).error('after rotation');
    expect(readFileSync(join(dataDir, 'logs', 'archon.log.1'), 'utf8')).toHaveLength(LOG_MAX_BYTES);
    expect(logLines(dataDir).map((line) => line.msg)).toEqual(['after rotation']);
  });
});

// Filling a real disk needs a tmpfs of its own, which only root (or CAP_SYS_ADMIN) may mount.
describe.skipIf(!canMountSmallDisk())('the log on a full disk', () => {
  const disk = useSmallDisk('1m');

  it('drops lines without ever throwing, says so once, and counts the dropped lines once it can write again', () => {
    const dataDir = join(disk(), 'data');
    const warnings: string[] = [];
    const log = openLog(dataDir, (message) => warnings.push(message));
    log.error('before the disk filled');
    const filler = fillDisk(disk());
    const padding = 'p'.repeat(200);
    for (let line = 0; line < 100; line++) expect(() => log.error({ line, padding }, 'while the disk is full')).not.toThrow();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/archon\.log cannot be written \(the disk is full\); its lines are dropped until it can be\. Free some space/);

    rmSync(filler);
    log.error('after space was freed');
    const lines = logLines(dataDir);
    const messages = lines.map((line) => String(line.msg));
    expect(messages[0]).toBe('before the disk filled');
    expect(messages.slice(-2)).toEqual([expect.stringMatching(/^\d+ log line\(s\) were dropped while the log could not be written$/), 'after space was freed']);
    const kept = messages.filter((message) => message === 'while the disk is full').length;
    const dropped = Number(/^\d+/.exec(messages.at(-2) ?? '')?.[0]);
    expect(dropped).toBeGreaterThan(0);
    expect(kept + dropped).toBeLessThanOrEqual(100);
  });

  it('opens on a disk already full, and writes once there is room', () => {
    const dataDir = join(disk(), 'full-from-the-start');
    const filler = fillDisk(disk());
    const warnings: string[] = [];
    const log = openLog(dataDir, (message) => warnings.push(message));
    expect(() => log.error({ padding: 'p'.repeat(5000) }, 'nowhere to go')).not.toThrow();
    expect(warnings).toHaveLength(1);
    rmSync(filler);
    log.error('now there is room');
    expect(existsSync(join(dataDir, 'logs', 'archon.log'))).toBe(true);
    expect(logLines(dataDir).map((line) => line.msg)).toEqual(['1 log line(s) were dropped while the log could not be written', 'now there is room']);
  });
});
