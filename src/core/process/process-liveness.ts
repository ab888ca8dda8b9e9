import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** A process's state and group from /proc (Linux), or null when it is gone. */
function procStat(pid: number | string): { state: string; pgid: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, , pgid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: state ?? '', pgid: Number(pgid) };
  } catch {
    return null;
  }
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

export function processRunning(pid: number): boolean {
  return process.platform === 'linux' ? running(procStat(pid)) : signalSucceeds(pid);
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
