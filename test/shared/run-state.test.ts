import { describe, expect, it } from 'vitest';
import { EMPTY_RUN_STATE, fold, foldEvents, grantKey, runStateOf } from '../../src/shared/run-state';
import type { RunEvent } from '../../src/shared/schemas/events';

type Body = { [K in RunEvent['type']]: Omit<Extract<RunEvent, { type: K }>, 'runId' | 'seq' | 'ts'> }[RunEvent['type']];
const at = (seq: number, body: Body): RunEvent => ({ ...body, runId: 'r', seq, ts: '2026-01-01T00:00:00.000Z' }) as RunEvent;

const lock = (seq: number, tool: string) => at(seq, { type: 'constraint.locked', constraint: { kind: 'never_tool', tool } });
const grant = (seq: number, tool: string, sideEffects: 'none' | 'reversible' | 'irreversible' = 'reversible') => at(seq, { type: 'tool.granted', stepId: 'a', tool, sideEffects });
const raise = (seq: number, cap: 'tokens' | 'cost' | 'model_calls', value: number) => at(seq, { type: 'budget.raised', cap, value });
const started = (seq: number, stepId: string) => at(seq, { type: 'step.started', stepId });

describe('the fold of a run’s events', () => {
  it('derives the locks, the grants, the dialect and the raised caps from the events', () => {
    const state = runStateOf([
      started(1, 'a'),
      lock(2, 'run_command'),
      grant(3, 'write_file'),
      at(4, { type: 'model.dialect_detected', dialect: 'hermes' }),
      raise(5, 'tokens', 4000),
      raise(6, 'cost', 2),
      raise(7, 'tokens', 8000),
      lock(8, 'run_command'),
    ]);
    expect(state).toMatchObject({ seq: 8, lockedTools: ['run_command'], toolGrants: [grantKey('write_file', 'reversible')], dialect: 'hermes', raisedCaps: { tokens: 8000, cost: 2 } });
    expect(state.events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('grants a tool per side-effect class, and drops its grants when its definition changed', () => {
    const granted = runStateOf([grant(1, 'srv__put', 'reversible'), grant(2, 'write_file')]);
    expect(granted.toolGrants).not.toContain(grantKey('srv__put', 'irreversible'));
    const changed = fold(granted, at(3, { type: 'tool.definition_changed', tool: 'srv__put', server: 'srv', previousHash: 'h1', hash: 'h2' }));
    expect(changed.toolGrants).toEqual([grantKey('write_file', 'reversible')]);
  });

  it('ignores an event whose seq it has already folded in: the same state comes back, nothing is listed twice', () => {
    const state = runStateOf([started(1, 'a'), grant(2, 'write_file')]);
    expect(fold(state, grant(2, 'write_file'))).toBe(state);
    expect(foldEvents(state, [started(1, 'a'), grant(2, 'write_file')])).toBe(state);
    const next = foldEvents(state, [grant(2, 'write_file'), started(3, 'b'), started(3, 'b')]);
    expect(next.events.map((event) => event.seq)).toEqual([1, 2, 3]);
  });

  it('ignores an older event arriving after a newer one, even one that would change a decision', () => {
    const state = foldEvents(EMPTY_RUN_STATE, [started(1, 'a'), raise(5, 'tokens', 8000)]);
    const late = foldEvents(state, [raise(4, 'tokens', 4000), lock(3, 'run_command')]);
    expect(late).toBe(state);
    expect(late).toMatchObject({ seq: 5, lockedTools: [], raisedCaps: { tokens: 8000 } });
  });

  it('leaves the state it was given as it was', () => {
    const state = runStateOf([started(1, 'a')]);
    const events = state.events;
    foldEvents(state, [lock(2, 'run_command'), grant(3, 'write_file')]);
    expect(state).toMatchObject({ seq: 1, lockedTools: [], toolGrants: [] });
    expect(state.events).toBe(events);
    expect(events).toHaveLength(1);
  });
});
