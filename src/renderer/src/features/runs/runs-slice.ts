import type { RunEvent } from '../../../../shared/schemas/events';
import type { RunSummary, StepStatus } from '../../../../shared/schemas/run';
import type { RunDetail, StartRunInput, StepView } from '../../../../shared/schemas/run-detail';
import { latestOnly } from '../../store/latest-only';
import type { SliceContext } from '../../store/slice';

export interface RunsSlice {
  runs: RunSummary[];
  selectedRunId: string | null;
  detail: RunDetail | null;
  selectedStepId: string | null;
  /** Which step each pending approval belongs to, so its node shows awaiting_approval. */
  approvalSteps: Record<string, string>;
  /** The selected run's events as they arrived, so a detail fetched meanwhile misses none of them. */
  arrived: RunEvent[];
  refreshRuns(): Promise<void>;
  selectRun(runId: string | null): Promise<void>;
  selectStep(stepId: string | null): void;
  startRun(input: StartRunInput): Promise<void>;
  resumeRun(runId: string): Promise<void>;
  deleteRun(runId: string): Promise<void>;
  stopRun(runId: string): Promise<void>;
  pauseRun(runId: string): Promise<void>;
  applyRunEvents(events: readonly RunEvent[]): void;
}

const TERMINAL = new Set(['run.completed', 'run.failed', 'run.stopped', 'run.paused']);

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

export function createRunsSlice({ set, get, client, attempt }: SliceContext): RunsSlice {
  const loadDetail = latestOnly(
    (runId: string) => client.commands['runs.get']({ runId }),
    (fetched, runId) => {
      const state = get();
      if (state.selectedRunId !== runId) return;
      // Events that arrived while the detail was on its way are folded in on top of it.
      const known = fetched.events.at(-1)?.seq ?? 0;
      const late = state.arrived.filter((event) => event.seq > known);
      set({ detail: { ...fetched, steps: foldStepEvents(fetched.steps, late, state.approvalSteps), events: [...fetched.events, ...late] } });
    },
  );
  const listRuns = latestOnly(() => client.commands['runs.list'](), (runs) => set({ runs }));
  return {
    runs: [],
    selectedRunId: null,
    detail: null,
    selectedStepId: null,
    approvalSteps: {},
    arrived: [],
    refreshRuns: () => attempt(listRuns),
    selectRun: (runId) =>
      attempt(async () => {
        set({ selectedRunId: runId, selectedStepId: null, detail: null, arrived: [] });
        if (runId) await loadDetail(runId);
      }),
    selectStep: (stepId) => set({ selectedStepId: stepId }),
    startRun: (input) =>
      attempt(async () => {
        const { runId } = await client.commands['runs.start'](input);
        set({ view: 'runs' });
        await get().selectRun(runId);
        await get().refreshRuns();
      }),
    resumeRun: (runId) =>
      attempt(async () => {
        await client.commands['runs.resume']({ runId });
        await get().selectRun(runId);
      }),
    stopRun: (runId) =>
      attempt(async () => {
        await client.commands['runs.stop']({ runId });
      }),
    pauseRun: (runId) =>
      attempt(async () => {
        await client.commands['runs.pause']({ runId });
      }),
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
        const planChanged = mine.some((event) => event.type === 'plan.ready' || event.type === 'plan.revised' || event.type === 'run.resumed');
        set({ detail: { ...detail, steps: foldStepEvents(detail.steps, mine, approvalSteps), events: [...detail.events, ...mine] } });
        if (planChanged && state.selectedRunId) void attempt(() => loadDetail(state.selectedRunId as string));
      }
      set({ approvalSteps });
      if (events.some((event) => TERMINAL.has(event.type) || event.type === 'run.started' || event.type === 'plan.ready')) {
        void get().refreshRuns();
        if (state.selectedRunId && mine.some((event) => TERMINAL.has(event.type))) void attempt(() => loadDetail(state.selectedRunId as string));
      }
    },
  };
}

