import { describe, expect, it } from 'vitest';
import { anyRunGoing, dayTotals, foldLive, shownRun, type LiveInputs } from '../../../../src/renderer/src/features/runs/live-summary';
import type { RunEvent } from '../../../../src/shared/schemas/events';
import { RunSummarySchema, type RunSummary } from '../../../../src/shared/schemas/run';

const START = '2026-11-23T08:00:00.000Z';
const LATER = '2026-11-23T08:00:10.000Z';
const LATEST = '2026-11-23T08:00:20.000Z';

function run(id: string, extra: Partial<RunSummary> = {}): RunSummary {
  return RunSummarySchema.parse({ id, goal: `goal ${id}`, status: 'running', policy: 'balanced', createdAt: START, updatedAt: START, tokens: 0, costUsd: 0, answer: null, error: null, ...extra });
}

const budget = (runId: string, seq: number, tokens: number): RunEvent => ({ type: 'budget.updated', runId, seq, ts: START, tokens, costUsd: tokens / 1000, maxTokens: null, maxCostUsd: null, modelCalls: 1, toolCalls: 0 });

function inputs(runs: RunSummary[], events: RunEvent[] = [], extra: Partial<LiveInputs> = {}): LiveInputs {
  return { runs, live: foldLive({}, events), control: {}, awaiting: new Set(), now: Date.parse(START) + 35_000, ...extra };
}

describe('one live state of a run, for its card, its header and the day', () => {
  it('a going run counts its seconds on the one clock and its tokens from its last budget event, not the list fetched before', () => {
    const shown = shownRun(inputs([run('r', { tokens: 1028 })], [budget('r', 1, 2000), budget('r', 2, 3484)]), run('r', { tokens: 1028 }));
    expect(shown).toMatchObject({ status: 'running', tokens: 3484, seconds: 35, statusText: 'running' });
  });

  it('counts a parent with its sub-agents’ runs, as the budget does, and the day counts each run once', () => {
    const runs = [run('child', { parentRunId: 'parent', tokens: 300 }), run('parent', { tokens: 100 })];
    const live = inputs(runs);
    expect(shownRun(live, runs[1] as RunSummary)).toMatchObject({ tokens: 400, withSubAgents: true });
    expect(dayTotals(live, START.slice(0, 10)).tokens).toBe(400);
  });

  it('says a paused run runs again once resumed, and what was asked of a going run until it ends', () => {
    const paused: RunEvent = { type: 'run.paused', runId: 'r', seq: 3, ts: LATER, reason: 'Paused.', whatToDo: 'Resume.' };
    const listed = run('r');
    const afterPause = inputs([listed], [paused]);
    expect(shownRun(afterPause, listed).status).toBe('paused');
    const resumed: RunEvent = { type: 'run.resumed', runId: 'r', seq: 6, ts: LATEST, completedSteps: [] };
    expect(shownRun(inputs([listed], [paused, resumed]), listed).status).toBe('running');
    expect(shownRun(inputs([listed], [], { control: { r: 'stop' } }), listed).statusText).toBe('stopping…');
    expect(shownRun(inputs([listed], [paused], { control: { r: 'stop' } }), listed).control).toBeNull();
  });

  it('says a run whose plan waits for the operator awaits approval, not planning', () => {
    const listed = run('r', { status: 'planning' });
    expect(shownRun(inputs([listed], [], { awaiting: new Set(['r']) }), listed).statusText).toBe('awaiting approval');
  });

  it('keeps the list’s more exact end once it has one (a budget_exhausted run announced as failed)', () => {
    const failed: RunEvent = { type: 'run.failed', runId: 'r', seq: 4, ts: START, error: 'Budget exhausted.' };
    const listed = run('r', { status: 'budget_exhausted' });
    expect(shownRun(inputs([listed], [failed]), listed).status).toBe('budget_exhausted');
  });

  it('trusts a list fetched after the event that said otherwise: a resume the host failed to start does not stay running', () => {
    const resumed: RunEvent = { type: 'run.resumed', runId: 'r', seq: 6, ts: LATER, completedSteps: [] };
    const failedSince = run('r', { status: 'failed', updatedAt: LATEST });
    expect(shownRun(inputs([failedSince], [resumed]), failedSince).status).toBe('failed');
  });

  it('shows a run nobody drives as interrupted: its time stops where it was left, and the clock has nothing to tick for', () => {
    const left = run('r', { status: 'running', updatedAt: LATER, interrupted: true });
    const shown = shownRun(inputs([left], [], { now: Date.parse(LATEST) + 3_600_000 }), left);
    expect(shown).toMatchObject({ interrupted: true, seconds: 10, statusText: 'running, interrupted' });
    expect(anyRunGoing({ runs: [left], live: {} })).toBe(false);
    const resumed: RunEvent = { type: 'run.resumed', runId: 'r', seq: 6, ts: LATEST, completedSteps: [] };
    expect(anyRunGoing({ runs: [left], live: foldLive({}, [resumed]) })).toBe(true);
  });
});
