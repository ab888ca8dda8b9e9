import { fstatSync, ftruncateSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
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

/** Why the log cannot be written, and what the operator does about it. */
function warningFor(file: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const full = code === 'ENOSPC' || code === 'EDQUOT';
  const why = full ? 'the disk is full' : error instanceof Error ? error.message : String(error);
  return `Archon's log ${file} cannot be written (${why}); its lines are dropped until it can be. ${full ? 'Free some space on that disk.' : 'Check that Archon may write that folder.'}`;
}

/**
 * The log file as pino's destination, written synchronously and never throwing: pino's own file
 * destination (sonic-boom) turns a failed write into an 'error' event, which crashed the process
 * when nobody listened. A line the disk refuses is dropped; the first drop is reported through
 * `warn`, and the count lands in the log once a write succeeds again.
 */
class LogFile implements pino.DestinationStream {
  private fd: number | null = null;
  private dropped = 0;
  private reported = false;

  constructor(
    private readonly file: string,
    private readonly warn: (message: string) => void,
  ) {}

  write(line: string): void {
    try {
      this.fd ??= this.open();
      if (this.dropped > 0) {
        this.append(this.droppedNote());
        this.dropped = 0;
      }
      this.append(line);
    } catch (error) {
      this.drop(error);
    }
  }

  private open(): number {
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    return openSync(this.file, 'a', 0o600);
  }

  /** All of `text` or none of it: a line cut short by the disk is taken back, so every line in the log stays whole. */
  private append(text: string): void {
    const fd = this.fd as number;
    const bytes = Buffer.from(text);
    let offset = 0;
    try {
      while (offset < bytes.length) {
        const written = writeSync(fd, bytes, offset);
        if (written === 0) throw new Error(`${this.file} accepted no bytes`);
        offset += written;
      }
    } catch (error) {
      if (offset > 0) ftruncateSync(fd, fstatSync(fd).size - offset);
      throw error;
    }
  }

  private droppedNote(): string {
    return `${JSON.stringify({ level: 40, time: Date.now(), pid: process.pid, msg: `${this.dropped} log line(s) were dropped while the log could not be written` })}\n`;
  }

  private drop(error: unknown): void {
    this.dropped++;
    if (this.reported) return;
    this.reported = true;
    this.warn(warningFor(this.file, error));
  }
}

function warnOnStderr(message: string): void {
  try {
    process.stderr.write(`archon: ${message}\n`);
  } catch {
    // No stderr to tell: the dropped lines are counted in the log itself.
  }
}

/**
 * A JSON-lines log in `<data dir>/logs/archon.log`, rotated by size when a process opens it. It never
 * throws, at opening or writing: a full disk drops log lines and says so once through `warn`.
 */
export function openLog(dataDir: string, warn: (message: string) => void = warnOnStderr): Log {
  const file = join(dataDir, 'logs', 'archon.log');
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    rotate(file);
  } catch {
    // Rotation waits for the next start; the log goes on in the current file, or drops lines.
  }
  return pino({ base: { pid: process.pid } }, new LogFile(file, warn));
}
