import type { RunEvent } from '../../../../shared/schemas/events';
import { ENDED_RUN_STATUSES, type RunControlAction, type RunStatus, type RunSummary } from '../../../../shared/schemas/run';
import { statusLabel } from '../contract/contract-model';

/** What a run's events said since the desk opened: newer than the listed summary until the list is fetched again. */
export interface LiveFigures {
  status: RunStatus | null;
  /** When the event that said `status` came. */
  statusAt: string | null;
  /** From the run's last `budget.updated`: the run with its sub-agents' runs. */
  tokens: number;
  costUsd: number;
  priceKnown: boolean | null;
  /** When its last end event came; null while it runs. */
  endedAt: string | null;
}

const NOTHING_YET: LiveFigures = { status: null, statusAt: null, tokens: 0, costUsd: 0, priceKnown: null, endedAt: null };

/** The status an event moves its run to; null when it moves none. */
function statusAfter(event: RunEvent): RunStatus | null {
  switch (event.type) {
    case 'run.started':
      return 'planning';
    case 'plan.ready':
    case 'run.resumed':
      return 'running';
    case 'run.completed':
      return event.gaps && event.gaps.length > 0 ? 'completed_with_gaps' : 'completed';
    case 'run.failed':
      return 'failed';
    case 'run.stopped':
      return 'stopped';
    case 'run.paused':
      return 'paused';
    default:
      return null;
  }
}

function foldFigures(figures: LiveFigures, event: RunEvent): LiveFigures {
  if (event.type === 'budget.updated') return { ...figures, tokens: event.tokens, costUsd: event.costUsd, priceKnown: event.priceKnown ?? null };
  const status = statusAfter(event);
  if (!status) return figures;
  return { ...figures, status, statusAt: event.ts, endedAt: ENDED_RUN_STATUSES.has(status) ? event.ts : null };
}

/** Every run's figures with these events folded in: the same object when none of them changes a figure. */
export function foldLive(live: Readonly<Record<string, LiveFigures>>, events: readonly RunEvent[]): Record<string, LiveFigures> {
  let next = live;
  for (const event of events) {
    const before = next[event.runId] ?? NOTHING_YET;
    const after = foldFigures(before, event);
    if (after !== before) next = { ...next, [event.runId]: after };
  }
  return next;
}

/** The live state the list, the header and the day's totals all read. */
export interface LiveInputs {
  runs: readonly RunSummary[];
  live: Readonly<Record<string, LiveFigures>>;
  /** Stop or pause asked for and not yet seen to end the run. */
  control: Readonly<Record<string, RunControlAction>>;
  /** Runs with an approval waiting for the operator. */
  awaiting: ReadonlySet<string>;
  /** The one clock: milliseconds, ticking while a run runs. */
  now: number;
}

/** A run as every part of the desk shows it. */
export interface ShownRun {
  status: RunStatus;
  /** "stopping…", "awaiting approval", "completed": what the status pill says. */
  statusText: string;
  control: RunControlAction | null;
  /** The run's tokens and cost with its sub-agents' runs, the rule the budget caps count by. */
  tokens: number;
  costUsd: number;
  priceKnown: boolean;
  withSubAgents: boolean;
  seconds: number;
  /** Not ended, yet no Archon process drives it (its host stopped): nothing moves until Resume. */
  interrupted: boolean;
}

const CONTROL_TEXT: Record<RunControlAction, string> = { stop: 'stopping…', pause: 'pausing…' };

/** What the run's events said since the list was fetched; null when the list is newer. */
function saidSince(summary: RunSummary, figures: LiveFigures | undefined): RunStatus | null {
  return figures?.status && figures.statusAt !== null && figures.statusAt > summary.updatedAt ? figures.status : null;
}

/** The fetched status, unless an event since said otherwise (an ended one fetched after it ended names the end more exactly). */
function currentStatus(summary: RunSummary, figures: LiveFigures | undefined): RunStatus {
  const said = saidSince(summary, figures);
  if (!said) return summary.status;
  return ENDED_RUN_STATUSES.has(said) && ENDED_RUN_STATUSES.has(summary.status) ? summary.status : said;
}

/** A run the list says nobody drives, and no event since said it moved. */
function interruptedNow(summary: RunSummary, figures: LiveFigures | undefined): boolean {
  return summary.interrupted === true && saidSince(summary, figures) === null;
}

function childrenOf(runs: readonly RunSummary[], runId: string): RunSummary[] {
  return runs.filter((run) => run.parentRunId === runId);
}

/** Tokens and cost of a run and its sub-agents' runs: the larger of what the list sums and what the run's last budget event said (both only grow). */
function treeFigures(inputs: LiveInputs, summary: RunSummary): { tokens: number; costUsd: number } {
  const listed = childrenOf(inputs.runs, summary.id).reduce(
    (sum, child) => {
      const figures = treeFigures(inputs, child);
      return { tokens: sum.tokens + figures.tokens, costUsd: sum.costUsd + figures.costUsd };
    },
    { tokens: summary.tokens, costUsd: summary.costUsd },
  );
  const live = inputs.live[summary.id];
  return { tokens: Math.max(listed.tokens, live?.tokens ?? 0), costUsd: Math.max(listed.costUsd, live?.costUsd ?? 0) };
}

function elapsedSeconds(createdAt: string, endedAt: string | null, now: number): number {
  return Math.max(0, Math.floor(((endedAt ? Date.parse(endedAt) : now) - Date.parse(createdAt)) / 1000));
}

export function formatSeconds(seconds: number): string {
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

export function shownRun(inputs: LiveInputs, summary: RunSummary): ShownRun {
  const figures = inputs.live[summary.id];
  const fetched = currentStatus(summary, figures);
  const ended = ENDED_RUN_STATUSES.has(fetched);
  const interrupted = !ended && interruptedNow(summary, figures);
  const status: RunStatus = !ended && inputs.awaiting.has(summary.id) ? 'awaiting_approval' : fetched;
  const control = ended ? null : (inputs.control[summary.id] ?? null);
  const totals = treeFigures(inputs, summary);
  const endedAt = ended ? (figures?.endedAt ?? summary.updatedAt) : interrupted ? summary.updatedAt : null;
  return {
    status,
    statusText: control ? CONTROL_TEXT[control] : interrupted ? `${statusLabel(status)}, interrupted` : statusLabel(status),
    control,
    ...totals,
    priceKnown: (figures?.priceKnown ?? summary.priceKnown) !== false,
    withSubAgents: childrenOf(inputs.runs, summary.id).length > 0,
    seconds: elapsedSeconds(summary.createdAt, endedAt, inputs.now),
    interrupted,
  };
}

/** A run as listed (or as opened, before the list has it), shown with what its events said since. */
export function shownListedRun(inputs: LiveInputs, run: RunSummary): ShownRun {
  return shownRun(inputs, inputs.runs.find((listed) => listed.id === run.id) ?? run);
}

/** Whether any listed run is still going, so the clock must tick. */
export function anyRunGoing(inputs: Pick<LiveInputs, 'runs' | 'live'>): boolean {
  return inputs.runs.some((run) => !ENDED_RUN_STATUSES.has(currentStatus(run, inputs.live[run.id])) && !interruptedNow(run, inputs.live[run.id]));
}

/** What the day's runs spent: each run counted once, through the run at the top of its tree. */
export function dayTotals(inputs: LiveInputs, day: string): { tokens: number; costUsd: number } {
  const today = inputs.runs.filter((run) => run.createdAt.startsWith(day));
  const todayIds = new Set(today.map((run) => run.id));
  return today
    .filter((run) => !run.parentRunId || !todayIds.has(run.parentRunId))
    .map((run) => treeFigures(inputs, run))
    .reduce((sum, figures) => ({ tokens: sum.tokens + figures.tokens, costUsd: sum.costUsd + figures.costUsd }), { tokens: 0, costUsd: 0 });
}
