import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

let collect: Collect | undefined;

/**
 * Gives the heap the finished runs grew back to the system: one full, memory-reducing collection.
 * While a host stays busy V8 keeps every page it grew (`archon serve` nearly doubled its RSS over 100
 * runs with a flat live heap); called once no run is active, it costs one pause between runs. The
 * collector is reached through a fresh context, so `gc` never appears on the host's own global.
 */
export function giveBackHeap(): void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as Collect;
  }
  collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}
