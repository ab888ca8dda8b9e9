import { describe, expect, it } from 'vitest';
import { createInboxSlice } from '../../../../src/renderer/src/features/inbox/inbox-slice';
import type { SliceContext } from '../../../../src/renderer/src/store/slice';
import type { RunEvent } from '../../../../src/shared/schemas/events';

const RUN_ID = '5f0c1e2d-0000-4000-8000-000000000000';
const events: RunEvent[] = Array.from({ length: 1200 }, (_, index) => ({ type: 'step.started', runId: RUN_ID, seq: index + 1, ts: '2030-01-01T00:00:00.000Z', stepId: `s${index + 1}` }));

/** The slice over a client whose reads of a cluster run's events are `read`. */
function sliceOver(read: (input: { afterSeq: number }) => Promise<RunEvent[]>) {
  let state: Record<string, unknown> = {};
  const context = {
    set: (patch: unknown) => (state = { ...state, ...(typeof patch === 'function' ? (patch as (current: typeof state) => object)(state) : (patch as object)) }),
    get: () => state,
    client: { commands: { 'clusterRuns.events': read, 'clusterRuns.list': () => Promise.resolve([]) } },
    attempt: (action: () => Promise<void>) => action(),
  } as unknown as SliceContext;
  state = { ...createInboxSlice(context) };
  return () => state as unknown as ReturnType<typeof createInboxSlice>;
}

/** The slice over a client whose reads answer (a page of 500) only when the test lets them. */
function sliceWithHeldReads() {
  const held: (() => void)[] = [];
  const slice = sliceOver(({ afterSeq }) => new Promise<RunEvent[]>((resolve) => held.push(() => resolve(events.filter((event) => event.seq > afterSeq).slice(0, 500)))));
  const answerNext = async () => {
    held.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { slice, held, answerNext };
}

describe('the Inbox slice: the events of a run on the cluster', () => {
  it('shown again while a later page is on its way: starts from the first event, each once, in order', async () => {
    const { slice, held, answerNext } = sliceWithHeldReads();
    const first = slice().showClusterRunEvents(RUN_ID);
    await answerNext();
    // Events 501… are asked for; the operator hides the events and shows them again before they come.
    await slice().showClusterRunEvents(null);
    const again = slice().showClusterRunEvents(RUN_ID);
    while (held.length > 0) await answerNext();
    await Promise.all([first, again]);
    expect(slice().clusterRunEvents.map((event) => event.seq)).toEqual(events.map((event) => event.seq));
  });

  it('a read that failed is said until a later one works, even one that brings nothing new', async () => {
    let answers = [() => Promise.reject(new Error('No Restate server answers.')), () => Promise.resolve([])];
    const slice = sliceOver(() => {
      const [next, ...rest] = answers;
      answers = rest;
      return next?.() ?? Promise.resolve([]);
    });
    await slice().showClusterRunEvents(RUN_ID);
    expect(slice().clusterRunEventsProblem).toBe('No Restate server answers.');
    await slice().refreshClusterRuns();
    expect(slice().clusterRunEventsProblem).toBeNull();
  });
});

describe('the Inbox slice: a stop of a run on the cluster', () => {
  /** The slice over a client whose stops answer as `stop` does, and whose list of the cluster's runs is `runs`. */
  function sliceStopping(stop: () => Promise<{ held: boolean }>, runs: () => unknown[]) {
    let state: Record<string, unknown> = {};
    const errors: unknown[] = [];
    const context = {
      set: (patch: unknown) => (state = { ...state, ...(typeof patch === 'function' ? (patch as (current: typeof state) => object)(state) : (patch as object)) }),
      get: () => state,
      client: { commands: { 'clusterRuns.stop': stop, 'clusterRuns.list': () => Promise.resolve(runs()), 'clusterRuns.events': () => Promise.resolve([]) } },
      attempt: (action: () => Promise<void>) => action().catch((error: unknown) => void errors.push(error)),
    } as unknown as SliceContext;
    state = { ...createInboxSlice(context) };
    return { slice: () => state as unknown as ReturnType<typeof createInboxSlice>, errors };
  }
  const underWay = { runId: RUN_ID, goal: 'wait', scheduleId: null, firedAt: null, state: 'under_way', status: null, problem: null };

  it('is shown as asked from the press on, while the run is under way, and no longer once the cluster lists it ended', async () => {
    let answer = () => {};
    let listed: unknown[] = [underWay];
    const { slice } = sliceStopping(() => new Promise((resolve) => (answer = () => resolve({ held: true }))), () => listed);
    const stopping = slice().stopClusterRun(RUN_ID);
    expect(slice().clusterRunsStopAsked.has(RUN_ID)).toBe(true);
    answer();
    await stopping;
    expect(slice().clusterRunsStopAsked.has(RUN_ID)).toBe(true);
    listed = [{ ...underWay, state: 'ended', status: 'stopped' }];
    await slice().refreshClusterRuns();
    expect(slice().clusterRunsStopAsked.has(RUN_ID)).toBe(false);
  });

  it('a stop the cluster refused is not shown as asked, and its error is raised', async () => {
    const { slice, errors } = sliceStopping(() => Promise.reject(new Error('No Restate server answers.')), () => [underWay]);
    await slice().stopClusterRun(RUN_ID);
    expect(slice().clusterRunsStopAsked.has(RUN_ID)).toBe(false);
    expect(errors).toEqual([new Error('No Restate server answers.')]);
  });
});
