import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { ArchonError } from '../../shared/errors';
import { processRunning, processStartTicks } from '../process/process-liveness';

const HolderSchema = z.object({ pid: z.number().int().positive(), startTicks: z.string().nullable() });
type Holder = z.infer<typeof HolderSchema>;

function holderOf(lock: string): Holder | null {
  try {
    return HolderSchema.parse(JSON.parse(readFileSync(lock, 'utf8')));
  } catch {
    return null;
  }
}

/** The start time tells a live holder from a later process that reused its PID. */
function stillHeld(holder: Holder): boolean {
  return processRunning(holder.pid) && (holder.startTicks === null || processStartTicks(holder.pid) === holder.startTicks);
}

/**
 * One pull of a model at a time: two writing the same part would ruin it. A lock file beside the part
 * names the process that holds it; one left by a process that is gone (killed mid-pull) is taken over.
 * Returns the release.
 */
export function lockDownload(part: string, name: string): () => void {
  const lock = `${part}.lock`;
  const mine = JSON.stringify({ pid: process.pid, startTicks: processStartTicks(process.pid) });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lock, mine, { flag: 'wx', mode: 0o600 });
      return () => rmSync(lock, { force: true });
    } catch (error) {
      const { code } = error as NodeJS.ErrnoException;
      if (code === 'ENOSPC') throw new ArchonError('DISK_FULL', `The disk holding ${part} is full. Free some space, then pull ${name} again.`);
      if (code !== 'EEXIST') throw error;
    }
    const holder = holderOf(lock);
    if (holder && stillHeld(holder)) throw new ArchonError('VALIDATION_FAILED', `${name} is being pulled by another process (PID ${holder.pid}). Wait for it to finish, or stop it, then try again.`);
    rmSync(lock, { force: true });
  }
  throw new ArchonError('VALIDATION_FAILED', `${name} is being pulled by another process (its lock ${lock} keeps coming back). Wait for it to finish, then try again.`);
}
