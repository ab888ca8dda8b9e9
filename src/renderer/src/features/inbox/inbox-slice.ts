import { arrivalTracker } from '../../../../shared/arrivals';
import type { RunEvent } from '../../../../shared/schemas/events';
import type { ClusterRun, InboxItem } from '../../../../shared/schemas/run-order';
import { latestOnly } from '../../store/latest-only';
import { pollEvery } from '../../store/poll';
import type { SliceContext } from '../../store/slice';
import { notifyInboxItem } from './inbox-notifications';

/** How often the inbox is asked again: another process writes it. */
const POLL_MS = 5000;
/** The most items asked for; the latest come first. */
const LIMIT = 100;
/** The most reads of a cluster run's events at once (each brings a few hundred). */
const EVENT_READS = 20;

export interface InboxSlice {
  /** Runs the workers of a Restate cluster drove here that ended or wait for an answer, the latest first. */
  inbox: InboxItem[];
  /** The runs the workers of the cluster in Settings drive or drove, as the cluster lists them, the latest first. */
  clusterRuns: ClusterRun[];
  /** Why the cluster's runs could not be read at the last try; null when they were. */
  clusterRunsProblem: string | null;
  /** The run on the cluster whose events the Inbox shows (null: none), and its events read so far, oldest first. */
  shownClusterRun: string | null;
  clusterRunEvents: RunEvent[];
  /** Why its events could not be read at the last try; null when they were. */
  clusterRunEventsProblem: string | null;
  /** The runs on the cluster a stop was asked of here, until the cluster lists them as no longer under way. */
  clusterRunsStopAsked: ReadonlySet<string>;
  /** Asks whichever worker holds a run on the cluster to stop it (the cluster's emergency stop is not used). */
  stopClusterRun(runId: string): Promise<void>;
  /** Shows the events of a run on the cluster, or hides them (null); they are read again with the cluster's runs. */
  showClusterRunEvents(runId: string | null): Promise<void>;
  /** The run ids listed while the operator had the Inbox view open. */
  inboxSeen: ReadonlySet<string>;
  refreshInbox(): Promise<void>;
  refreshClusterRuns(): Promise<void>;
  /** Loads the inbox and the cluster's runs now and every few seconds until the returned function is called. */
  watchInbox(): () => void;
  /** Counts every item listed now as seen. */
  markInboxSeen(): void;
  /** Opens the run in the Runs view. */
  openInboxRun(runId: string): Promise<void>;
}

const idsOf = (items: readonly InboxItem[]) => new Set(items.map((item) => item.run.id));

export function createInboxSlice({ set, get, client, attempt }: SliceContext): InboxSlice {
  const arrivals = arrivalTracker((item: InboxItem) => item.run.id);
  const apply = (items: InboxItem[]) => {
    const landed = arrivals(items);
    set({ inbox: items });
    for (const item of landed) notifyInboxItem(item);
  };
  // One request at a time: a caller while one is out waits for its answer instead of sending another.
  let inFlight: Promise<void> | null = null;
  const load = () =>
    (inFlight ??= client.commands['inbox.list']({ limit: LIMIT })
      .then(apply)
      .finally(() => {
        inFlight = null;
      }));
  const listClusterRuns = latestOnly(
    () => client.commands['clusterRuns.list'](),
    (clusterRuns) => set((state) => ({ clusterRuns, clusterRunsProblem: null, clusterRunsStopAsked: new Set([...state.clusterRunsStopAsked].filter((runId) => clusterRuns.some((run) => run.runId === runId && run.state === 'under_way'))) })),
  );
  /** The shown run's events its worker sent since the last read, added after those already shown (each once, by seq). */
  const readClusterRunEvents = async () => {
    for (let read = 0; read < EVENT_READS; read++) {
      const { shownClusterRun: runId, clusterRunEvents: known } = get();
      if (runId === null) return;
      const afterSeq = known.at(-1)?.seq ?? 0;
      const more = await client.commands['clusterRuns.events']({ runId, afterSeq });
      if (more.length === 0) return;
      // Taken only where it was asked from: a read from before the run was shown again (its list emptied) would leave a gap.
      set((state) => (state.shownClusterRun === runId && (state.clusterRunEvents.at(-1)?.seq ?? 0) === afterSeq ? { clusterRunEvents: [...state.clusterRunEvents, ...more] } : {}));
    }
  };
  const problemOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
  const readShownEvents = () =>
    readClusterRunEvents().then(
      () => set({ clusterRunEventsProblem: null }),
      (error: unknown) => set({ clusterRunEventsProblem: problemOf(error) }),
    );
  return {
    inbox: [],
    clusterRuns: [],
    clusterRunsProblem: null,
    inboxSeen: new Set(),
    shownClusterRun: null,
    clusterRunEvents: [],
    clusterRunEventsProblem: null,
    clusterRunsStopAsked: new Set(),
    // Marked asked at once, so a second press sends nothing while the first is out; unmarked if it fails.
    stopClusterRun: async (runId) => {
      const marked = (asked: boolean) => (state: { clusterRunsStopAsked: ReadonlySet<string> }) => ({ clusterRunsStopAsked: new Set([...state.clusterRunsStopAsked].filter((id) => id !== runId).concat(asked ? [runId] : [])) });
      set(marked(true));
      await attempt(async () => {
        try {
          await client.commands['clusterRuns.stop']({ runId });
        } catch (error) {
          set(marked(false));
          throw error;
        }
        await get().refreshClusterRuns();
      });
    },
    showClusterRunEvents: async (runId) => {
      set({ shownClusterRun: runId, clusterRunEvents: [], clusterRunEventsProblem: null });
      await readShownEvents();
    },
    refreshInbox: () => attempt(load),
    // Said in the Inbox, not as an error: a cluster out of reach would otherwise raise one every few seconds.
    refreshClusterRuns: () =>
      listClusterRuns().then(
        () => readShownEvents(),
        (error: unknown) => set({ clusterRunsProblem: problemOf(error) }),
      ),
    // The cluster's runs only while the Inbox shows them: each read scans every run the cluster keeps.
    watchInbox: () => pollEvery(POLL_MS, async () => void (await Promise.all([get().refreshInbox(), get().view === 'inbox' ? get().refreshClusterRuns() : null]))),
    markInboxSeen() {
      const { inbox, inboxSeen } = get();
      if (inbox.every((item) => inboxSeen.has(item.run.id))) return;
      set({ inboxSeen: new Set([...inboxSeen, ...idsOf(inbox)]) });
    },
    async openInboxRun(runId) {
      set({ view: 'runs' });
      // The run was started by another process, so the history may not list it yet.
      await Promise.all([get().selectRun(runId), get().refreshRuns()]);
    },
  };
}
