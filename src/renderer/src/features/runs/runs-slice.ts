import { foldEvents, runStateOf, type RunState } from '../../../../shared/run-state';
import type { RunEvent } from '../../../../shared/schemas/events';
import type { RunControlAction, RunSummary, StepStatus } from '../../../../shared/schemas/run';
import type { RunDetail, StartRunInput, StepView } from '../../../../shared/schemas/run-detail';
import { latestOnly } from '../../store/latest-only';
import type { SliceContext } from '../../store/slice';
import { anyRunGoing, foldLive, type LiveFigures } from './live-summary';

/** A run as the store holds it: its detail, whose events are those of the one fold of events (each `seq` once). */
export interface LiveRun extends RunDetail {
  state: RunState;
}

export interface RunsSlice {
  runs: RunSummary[];
  selectedRunId: string | null;
  detail: LiveRun | null;
  selectedStepId: string | null;
  /** Which step each pending approval belongs to, so its node shows awaiting_approval. */
  approvalSteps: Record<string, string>;
  /** The selected run's events as they arrived, so a detail fetched meanwhile misses none of them. */
  arrived: RunEvent[];
  /** The sub-agent runs the selected run started (and theirs), by run id, kept current by their events. */
  children: Record<string, LiveRun>;
  /** What each run's events said since the list was fetched: status, tokens, cost, end. */
  live: Record<string, LiveFigures>;
  /** Stop or pause asked for a run whose end has not come yet. */
  control: Record<string, RunControlAction>;
  /** The one clock of elapsed times (ms), ticking each second while a run goes. */
  now: number;
  refreshRuns(): Promise<void>;
  selectRun(runId: string | null): Promise<void>;
  selectStep(stepId: string | null): void;
  /** Whether the run started; when it did not, why is the store's error. */
  startRun(input: StartRunInput): Promise<boolean>;
  resumeRun(runId: string): Promise<void>;
  deleteRun(runId: string): Promise<void>;
  stopRun(runId: string): Promise<void>;
  pauseRun(runId: string): Promise<void>;
  applyRunEvents(events: readonly RunEvent[]): void;
}

const TERMINAL = new Set(['run.completed', 'run.failed', 'run.stopped', 'run.paused']);
/** Events after which a run's detail is fetched again: its plan or its outcome changed. */
const REFETCH = new Set([...TERMINAL, 'plan.ready', 'plan.revised', 'run.resumed']);

/** The child runs these events say were started. */
function childRunIds(events: readonly RunEvent[]): string[] {
  return events.flatMap((event) => (event.type === 'subagent.started' ? [event.childRunId] : []));
}

/** A fetched run with the events that arrived while it was on its way folded in on top of it. */
function fetchedRun(fetched: RunDetail, arrived: readonly RunEvent[], approvalSteps: Record<string, string>): LiveRun {
  const state = runStateOf(fetched.events);
  return withEvents({ ...fetched, events: state.events, state }, arrived, approvalSteps);
}

/** The run with its `events` folded in: one it has already (by `seq`) changes nothing; only new ones move its steps. */
function withEvents(run: LiveRun, events: readonly RunEvent[], approvalSteps: Record<string, string>): LiveRun {
  const state = foldEvents(run.state, events.filter((event) => event.runId === run.run.id));
  if (state === run.state) return run;
  const added = state.events.slice(run.state.events.length);
  return { ...run, state, events: state.events, steps: foldStepEvents(run.steps, added, approvalSteps) };
}

/** The events the fold took in going from one run to the next. */
const addedEvents = (before: LiveRun, after: LiveRun): RunEvent[] => after.events.slice(before.events.length);

function withStatus(steps: StepView[], stepId: string, status: StepStatus, extra: Partial<StepView> = {}): StepView[] {
  return steps.map((step) => (step.spec.id === stepId && (step.status !== status || Object.keys(extra).length > 0) ? { ...step, status, ...extra } : step));
}

/** Folds a run's events into its steps: only the steps an event touches get new objects, so only their nodes re-render. */
export function foldStepEvents(steps: StepView[], events: readonly RunEvent[], approvalSteps: Record<string, string>): StepView[] {
  let next = steps;
  for (const event of events) {
    if (event.type === 'step.started') next = withStatus(next, event.stepId, 'running');
    else if (event.type === 'step.completed') next = withStatus(next, event.stepId, 'completed', { result: event.result });
    else if (event.type === 'step.failed') next = withStatus(next, event.stepId, 'failed', { error: event.reason });
    else if (event.type === 'step.skipped') next = withStatus(next, event.stepId, 'skipped', { error: event.reason });
    else if (event.type === 'approval.requested' && event.stepId && next.some((step) => step.spec.id === event.stepId && step.status === 'running')) {
      next = withStatus(next, event.stepId, 'awaiting_approval');
    } else if (event.type === 'approval.resolved') {
      const stepId = approvalSteps[event.approvalId];
      if (stepId && next.some((step) => step.spec.id === stepId && step.status === 'awaiting_approval')) next = withStatus(next, stepId, 'running');
    } else if (event.type === 'run.stopped' || event.type === 'run.paused') {
      next = next.map((step) => (step.status === 'running' || step.status === 'awaiting_approval' ? { ...step, status: 'stopped' } : step));
    }
  }
  return next;
}

const withoutKey = <T>(record: Readonly<Record<string, T>>, key: string): Record<string, T> => Object.fromEntries(Object.entries(record).filter(([name]) => name !== key));

export function createRunsSlice({ set, get, client, attempt }: SliceContext): RunsSlice {
  let ticking: ReturnType<typeof setInterval> | null = null;
  /** Ticks the clock while a listed (or the opened) run goes, and stops it when none does. */
  const syncClock = () => {
    const { runs, live, detail } = get();
    const going = anyRunGoing({ runs: detail && !runs.some((run) => run.id === detail.run.id) ? [...runs, detail.run] : runs, live });
    if (going === (ticking !== null)) return;
    if (ticking) clearInterval(ticking);
    ticking = going ? setInterval(() => set({ now: Date.now() }), 1000) : null;
    set({ now: Date.now() });
  };
  /** Asks the run to stop or pause, showing that it was asked until its end event comes (or the asking fails). */
  const control = (runId: string, action: RunControlAction) =>
    attempt(async () => {
      set({ control: { ...get().control, [runId]: action } });
      try {
        await client.commands[action === 'stop' ? 'runs.stop' : 'runs.pause']({ runId });
      } catch (error) {
        set({ control: withoutKey(get().control, runId) });
        throw error;
      }
    });
  /** Child runs being fetched, with the events of theirs that arrived meanwhile. */
  const fetching = new Map<string, RunEvent[]>();
  const loadChild = async (childRunId: string) => {
    const selected = get().selectedRunId;
    if (!fetching.has(childRunId)) fetching.set(childRunId, []);
    const fetched = await client.commands['runs.get']({ runId: childRunId });
    const state = get();
    if (state.selectedRunId !== selected) return;
    const child = fetchedRun(fetched, fetching.get(childRunId) ?? [], state.approvalSteps);
    fetching.delete(childRunId);
    set({ children: { ...state.children, [childRunId]: child } });
    trackChildren(child.events);
  };
  const trackChildren = (events: readonly RunEvent[]) => {
    for (const childRunId of childRunIds(events)) if (!fetching.has(childRunId) && !get().children[childRunId]) void attempt(() => loadChild(childRunId));
  };
  /** Folds the events of tracked child runs into them; a child still being fetched keeps them for when it arrives. */
  const applyChildEvents = (all: readonly RunEvent[], approvalSteps: Record<string, string>) => {
    const children = { ...get().children };
    const events = all.filter((event) => children[event.runId] || fetching.has(event.runId));
    if (events.length === 0) return;
    const refetch = new Set<string>();
    for (const runId of new Set(events.map((event) => event.runId))) {
      const child = children[runId];
      if (!child) continue;
      children[runId] = withEvents(child, events, approvalSteps);
      if (addedEvents(child, children[runId]).some((event) => REFETCH.has(event.type))) refetch.add(runId);
    }
    // A child being fetched (again) gets the events that arrive meanwhile on top of what it fetches.
    for (const event of events) fetching.get(event.runId)?.push(event);
    set({ children });
    trackChildren(events);
    for (const childRunId of refetch) void attempt(() => loadChild(childRunId));
  };
  const loadDetail = latestOnly(
    (runId: string) => client.commands['runs.get']({ runId }),
    (fetched, runId) => {
      const state = get();
      if (state.selectedRunId !== runId) return;
      // Events that arrived while the detail was on its way are folded in on top of it.
      const detail = fetchedRun(fetched, state.arrived, state.approvalSteps);
      set({ detail });
      trackChildren(detail.events);
      syncClock();
    },
  );
  const listRuns = latestOnly(
    () => client.commands['runs.list'](),
    (runs) => {
      set({ runs });
      syncClock();
    },
  );
  return {
    runs: [],
    selectedRunId: null,
    detail: null,
    selectedStepId: null,
    approvalSteps: {},
    arrived: [],
    children: {},
    live: {},
    control: {},
    now: Date.now(),
    refreshRuns: () => attempt(listRuns),
    selectRun: (runId) =>
      attempt(async () => {
        set({ selectedRunId: runId, selectedStepId: null, detail: null, arrived: [], children: {} });
        fetching.clear();
        if (runId) await loadDetail(runId);
      }),
    selectStep: (stepId) => set({ selectedStepId: stepId }),
    async startRun(input) {
      let started = false;
      await attempt(async () => {
        const { runId } = await client.commands['runs.start'](input);
        started = true;
        set({ view: 'runs' });
        await get().selectRun(runId);
        await get().refreshRuns();
      });
      return started;
    },
    resumeRun: (runId) =>
      attempt(async () => {
        await client.commands['runs.resume']({ runId });
        // Its `run.resumed` event says it goes again; the list is fetched so it no longer counts as interrupted.
        set({ control: withoutKey(get().control, runId) });
        await listRuns();
        // The opened run stays on screen while its detail is fetched again; another one is opened.
        if (get().selectedRunId === runId) await loadDetail(runId);
        else await get().selectRun(runId);
      }),
    stopRun: (runId) => control(runId, 'stop'),
    pauseRun: (runId) => control(runId, 'pause'),
    deleteRun: (runId) =>
      attempt(async () => {
        await client.commands['runs.delete']({ runId });
        if (get().selectedRunId === runId) set({ selectedRunId: null, detail: null });
        await get().refreshRuns();
      }),
    applyRunEvents(events) {
      const state = get();
      const approvalSteps = { ...state.approvalSteps };
      for (const event of events) {
        if (event.type === 'approval.requested' && event.stepId) approvalSteps[event.approvalId] = event.stepId;
      }
      const mine = events.filter((event) => event.runId === state.selectedRunId);
      if (mine.length > 0) set({ arrived: [...state.arrived, ...mine].slice(-5000) });
      const detail = state.detail;
      if (detail && mine.length > 0) {
        const next = withEvents(detail, mine, approvalSteps);
        const planChanged = addedEvents(detail, next).some((event) => event.type === 'plan.ready' || event.type === 'plan.revised' || event.type === 'run.resumed');
        set({ detail: next });
        if (planChanged && state.selectedRunId) void attempt(() => loadDetail(state.selectedRunId as string));
      }
      const ended = new Set(events.filter((event) => TERMINAL.has(event.type)).map((event) => event.runId));
      const controls = Object.fromEntries(Object.entries(get().control).filter(([runId]) => !ended.has(runId)));
      set({ approvalSteps, live: foldLive(get().live, events), ...(ended.size > 0 ? { control: controls } : {}) });
      syncClock();
      trackChildren(mine);
      applyChildEvents(events.filter((event) => event.runId !== state.selectedRunId), approvalSteps);
      if (events.some((event) => TERMINAL.has(event.type) || event.type === 'run.started' || event.type === 'plan.ready')) {
        void get().refreshRuns();
        if (state.selectedRunId && mine.some((event) => TERMINAL.has(event.type))) void attempt(() => loadDetail(state.selectedRunId as string));
      }
    },
  };
}

