import { ArchonError, toErrorEnvelope } from '../shared/errors';
import { ToAuditorSchema, type FromAuditor, type ToAuditor } from '../shared/auditor-protocol';
import { parentChannel, type ParentChannel } from '../shared/parent-channel';
import { Auditor } from './auditor';

/**
 * The auditor's own process (out/node/auditor.js): forked by `archon run`/`resume`/`serve`, or an
 * Electron utility process in the app, with the data dir as its argument. It is the only writer of
 * audit.db and the only reader of the key; the host only nudges it, asks it to drain, and asks for
 * reports. It polls archon.db on a short interval too, so a lost nudge delays, never loses, an event.
 */
const POLL_MS = 250;
/**
 * Other auditors of the same data dir hold audit.db's write lock in turn; under load one may wait past
 * SQLite's busy timeout. The next poll retries from the cursor, so a busy log is said only once it has
 * lasted this long; a drain keeps retrying for as long, within the host's wait for it.
 */
const BUSY_PATIENCE_MS = 40_000;

const isBusy = (error: unknown): boolean => typeof (error as { code?: unknown }).code === 'string' && (error as { code: string }).code.startsWith('SQLITE_BUSY');

function serve(auditor: Auditor, parent: ParentChannel<FromAuditor>): void {
  let closed = false;
  let busySince: number | null = null;
  const finish = (last?: FromAuditor) => {
    if (closed) return;
    closed = true;
    clearInterval(timer);
    auditor.close();
    void (last ? parent.send(last) : Promise.resolve()).finally(() => process.exit(0));
  };
  const report = (id: number | null, error: unknown) =>
    void parent.send({ type: 'failed', id, error: toErrorEnvelope(ArchonError.isInstance(error) ? error : new ArchonError('INTERNAL', `The auditor could not record: ${(error as Error).message}`)) });
  const guarded = (id: number | null, work: () => void) => {
    try {
      work();
    } catch (error) {
      // audit.db could not be written (disk full): say so; the next poll retries from the cursor.
      report(id, error);
    }
  };
  /** Following archon.db: a busy log is left to the next poll, which goes on from the cursor, and said only once it has lasted. */
  const follow = (work: () => void) => {
    try {
      work();
      busySince = null;
    } catch (error) {
      if (isBusy(error)) {
        busySince ??= Date.now();
        if (Date.now() - busySince < BUSY_PATIENCE_MS) return;
        busySince = null;
      }
      report(null, error);
    }
  };
  /** The last catch-up before the process ends, retried while the log is busy. */
  const catchUpLast = async (): Promise<number> => {
    clearInterval(timer);
    let audited = 0;
    const until = Date.now() + BUSY_PATIENCE_MS;
    for (;;) {
      try {
        audited = auditor.catchUp();
        break;
      } catch (error) {
        if (!isBusy(error) || Date.now() >= until) {
          report(null, error);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    }
    return audited;
  };
  const timer = setInterval(() => follow(() => auditor.poll()), POLL_MS);
  const handle = (message: ToAuditor) => {
    switch (message.type) {
      case 'nudge':
        return follow(() => auditor.follow(message.runIds));
      case 'drain':
        return void catchUpLast().then((audited) => finish({ type: 'drained', audited }));
      case 'report':
        return guarded(message.id, () => void parent.send({ type: 'report', id: message.id, report: auditor.report(message.scope) }));
      case 'verify':
        return guarded(message.id, () => void parent.send({ type: 'verify', id: message.id, result: auditor.verify() }));
      case 'restarted':
        return guarded(null, () => auditor.recordRestart(message));
    }
  };
  parent.onMessage((raw) => {
    const parsed = ToAuditorSchema.safeParse(raw);
    if (parsed.success) handle(parsed.data);
  });
  // The host died without draining (kill -9): catch up on what it committed, then go.
  parent.onGone(() => void catchUpLast().then(() => finish()));
}

function main(): void {
  const parent = parentChannel<FromAuditor>();
  const dataDir = process.argv[2];
  // The terminal's Ctrl-C is for the host, which drains this process on its way out.
  process.on('SIGINT', () => undefined);
  try {
    if (!dataDir) throw new ArchonError('CONFIG_INVALID', 'The auditor needs the data dir as its argument.');
    const auditor = Auditor.start(dataDir);
    void parent.send(auditor.problem ? { type: 'refused', problem: auditor.problem } : { type: 'ready', audited: auditor.catchUp() });
    serve(auditor, parent);
  } catch (error) {
    void parent.send({ type: 'failed', id: null, error: toErrorEnvelope(error) }).finally(() => process.exit(1));
  }
}

main();
