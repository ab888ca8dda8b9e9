import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';

/** Archon's internal log: errors no person is waiting on (subscriber failures, worker deaths, unexpected run errors). */
export type Log = pino.Logger;

export const LOG_MAX_BYTES = 5 * 1024 * 1024;
export const LOG_KEPT_FILES = 3;

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** archon.log → archon.log.1 → … → archon.log.N (the oldest dropped) once the current file is over the limit. */
function rotate(file: string): void {
  if (sizeOf(file) < LOG_MAX_BYTES) return;
  rmSync(`${file}.${LOG_KEPT_FILES}`, { force: true });
  for (let index = LOG_KEPT_FILES - 1; index >= 1; index--) {
    try {
      renameSync(`${file}.${index}`, `${file}.${index + 1}`);
    } catch {
      // That generation does not exist yet.
    }
  }
  renameSync(file, `${file}.1`);
}

/** A JSON-lines log in `<data dir>/logs/archon.log`, rotated by size when a process opens it. */
export function openLog(dataDir: string): Log {
  const dir = join(dataDir, 'logs');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, 'archon.log');
  rotate(file);
  return pino({ base: { pid: process.pid } }, pino.destination({ dest: file, sync: true, mode: 0o600 }));
}
