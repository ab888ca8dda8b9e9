import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** A process's name, state, group and kernel start time from /proc (Linux), or null when it is gone. */
function procStat(pid: number | string): { name: string; state: string; pgid: number; startTicks: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { name: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), state: fields[0] ?? '', pgid: Number(fields[2]), startTicks: fields[19] ?? '' };
  } catch {
    return null;
  }
}

/** When the kernel started a process (Linux), so a recorded id is never mistaken for a later process that reused it; null elsewhere or when it is gone. */
export function processStartTicks(pid: number): string | null {
  return procStat(pid)?.startTicks ?? null;
}

/** A zombie has exited; only its parent's reaping is left, and it holds nothing. */
const running = (stat: { state: string } | null) => stat !== null && stat.state !== 'Z' && stat.state !== 'X';

function signalSucceeds(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether `pid` runs; with `name`, only if it is still that program (a pid freed and reused by another is not ours to kill). */
export function processRunning(pid: number, name?: string): boolean {
  if (process.platform !== 'linux') return signalSucceeds(pid);
  const stat = procStat(pid);
  return running(stat) && (name === undefined || stat?.name === name);
}

export function groupRunning(pgid: number): boolean {
  if (!signalSucceeds(-pgid)) return false;
  if (process.platform !== 'linux') return true;
  return readdirSync('/proc').some((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    const stat = procStat(entry);
    return stat?.pgid === pgid && running(stat);
  });
}

export function signal(target: number, name: NodeJS.Signals): void {
  try {
    process.kill(target, name);
  } catch {
    // Already gone.
  }
}

/** Polls until `done()` holds or `ms` have passed; true when it holds. */
export async function pollUntil(done: () => boolean, ms: number, everyMs = 10): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += everyMs) {
    if (done()) return true;
    await sleep(everyMs);
  }
  return done();
}
