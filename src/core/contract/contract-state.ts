import type { GoalContract } from '../../shared/schemas/goal-contract';
import { runStateOf } from '../../shared/run-state';
import { stateOf } from '../run/hooks';
import type { RunContext } from '../run/run-context';

interface ContractState {
  contract: GoalContract | null;
  loaded: boolean;
}

type ContractContext = Pick<RunContext, 'runId' | 'capabilityStates' | 'runs' | 'events'>;

function held(context: ContractContext): ContractState {
  return stateOf(context, 'goal-contract', () => ({ contract: null, loaded: false }));
}

/** The run's goal contract as last stated: kept once stated, else read from the run's events (a resumed run). */
export function contractOf(context: ContractContext): GoalContract | null {
  const state = held(context);
  if (!state.loaded) {
    context.events.flush();
    state.contract = runStateOf(context.runs.events(context.runId, Number.MAX_SAFE_INTEGER)).contract;
    state.loaded = true;
  }
  return state.contract;
}

/** States the contract: on disk and announced (`contract.ready`), then the one the run checks against. */
export function stateContract(context: ContractContext, contract: GoalContract, by: 'archon' | 'operator'): void {
  context.events.append(context.runId, 'contract.ready', { contract, by });
  Object.assign(held(context), { contract, loaded: true });
}
