import type { ArchonEvent } from '../../shared/schemas/events';

/** A call quieter than this gets a progress line. */
const QUIET_MS = 2000;
const TICK_MS = 250;
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface LongCallProgress {
  /** Called for each run event before its line is printed (the progress line is wiped first). */
  seen(event: ArchonEvent): void;
  stop(): void;
}

/**
 * A spinner with the elapsed time on a terminal's stderr while a run waits more than 2 s for a model
 * or tool call; nothing while a terminal approval question waits for the operator.
 */
export function longCallProgress(stream: NodeJS.WriteStream, now: () => number = Date.now): LongCallProgress {
  const tools = new Map<string, string>();
  let since = now();
  let running = false;
  let asking = 0;
  let drawn = false;
  let frame = 0;
  const wipe = () => {
    if (drawn) stream.write('\r\x1b[K');
    drawn = false;
  };
  const timer = setInterval(() => {
    const quiet = now() - since;
    if (!running || asking > 0 || quiet < QUIET_MS) return;
    const waitingFor = tools.size > 0 ? [...new Set(tools.values())].join(', ') : 'the model';
    stream.write(`\r\x1b[K${FRAMES[frame++ % FRAMES.length]} waiting for ${waitingFor} (${Math.floor(quiet / 1000)} s)`);
    drawn = true;
  }, TICK_MS);
  timer.unref();
  return {
    seen(event) {
      wipe();
      since = now();
      if (event.type === 'run.started' || event.type === 'run.resumed') running = true;
      else if (event.type === 'run.completed' || event.type === 'run.failed' || event.type === 'run.stopped' || event.type === 'run.paused') running = false;
      else if (event.type === 'tool.started') tools.set(event.callId, event.tool);
      else if (event.type === 'tool.completed' || event.type === 'tool.refused') tools.delete(event.callId);
      else if (event.type === 'approval.requested') asking++;
      else if (event.type === 'approval.resolved') asking = Math.max(0, asking - 1);
    },
    stop() {
      clearInterval(timer);
      wipe();
    },
  };
}
