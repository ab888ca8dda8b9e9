import type { CapName } from './budget-cap';
import type { RunEvent } from './schemas/events';
import type { GoalContract } from './schemas/goal-contract';
import type { SideEffects } from './schemas/tool';

/**
 * One run's state as its events say, the same for the runtime (on resume) and the renderer's store:
 * `fold` is pure and keyed by `seq`, so an event seen twice, or an older one arriving late, changes nothing.
 */
export interface RunState {
  /** The highest `seq` folded in (0: none). */
  readonly seq: number;
  /** The events folded in, in `seq` order; a new array whenever one is added, never changed in place. */
  readonly events: RunEvent[];
  /** Tools a person locked out for the rest of the run. */
  readonly lockedTools: readonly string[];
  /** "Allow all like this for this run", as `grantKey`s. */
  readonly toolGrants: readonly string[];
  /** The tool-call dialect the model writes in, once detected. */
  readonly dialect: string | null;
  /** Caps a person raised, at the value they approved. */
  readonly raisedCaps: Readonly<Partial<Record<CapName, number>>>;
  /** The goal's contract as last stated (the operator's edit replaces Archon's); null before planning or with verification off. */
  readonly contract: GoalContract | null;
}

export const EMPTY_RUN_STATE: RunState = { seq: 0, events: [], lockedTools: [], toolGrants: [], dialect: null, raisedCaps: {}, contract: null };

/** What a grant covers: one tool with one side-effect class (a tool whose class changes is asked about again). */
export function grantKey(tool: string, sideEffects: SideEffects): string {
  return `${tool} ${sideEffects}`;
}

const withItem = (items: readonly string[], item: string): readonly string[] => (items.includes(item) ? items : [...items, item]);

/** What one event changes besides the log; null when it changes nothing else. */
function decided(state: RunState, event: RunEvent): Partial<RunState> | null {
  switch (event.type) {
    case 'constraint.locked':
      return { lockedTools: withItem(state.lockedTools, event.constraint.tool) };
    case 'tool.granted':
      return { toolGrants: withItem(state.toolGrants, grantKey(event.tool, event.sideEffects)) };
    // A grant was made for the definition the operator saw: a changed one is asked about again.
    case 'tool.definition_changed':
      return { toolGrants: state.toolGrants.filter((grant) => !grant.startsWith(`${event.tool} `)) };
    case 'model.dialect_detected':
      return { dialect: event.dialect };
    case 'budget.raised':
      return { raisedCaps: { ...state.raisedCaps, [event.cap]: event.value } };
    case 'contract.ready':
      return { contract: event.contract };
    default:
      return null;
  }
}

/** The state after `event`: the same state when its `seq` is at or below the last one folded in. */
export function fold(state: RunState, event: RunEvent): RunState {
  return foldEvents(state, [event]);
}

/** The state after `events`, folded in their order (one new log for the batch). */
export function foldEvents(state: RunState, events: readonly RunEvent[]): RunState {
  let next = state;
  const added: RunEvent[] = [];
  for (const event of events) {
    if (event.seq <= next.seq) continue;
    next = { ...next, ...decided(next, event), seq: event.seq };
    added.push(event);
  }
  return added.length === 0 ? state : { ...next, events: [...state.events, ...added] };
}

/** The state a run's events (from its first) make. */
export function runStateOf(events: readonly RunEvent[]): RunState {
  return foldEvents(EMPTY_RUN_STATE, events);
}
