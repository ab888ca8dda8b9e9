import type { CommandHandlers } from '../shared/ipc/dispatch';
import type { EstopState, EstopTrigger } from '../shared/schemas/estop';
import type { EventBus } from './events/event-bus';
import type { ArchonStore } from './store/archon-store';

export interface CommandDependencies {
  store: ArchonStore;
  bus: EventBus;
  info: { version: string; dataDir: string; host: 'electron' | 'headless' };
  now: () => Date;
}

type EstopDependencies = Pick<CommandDependencies, 'store' | 'bus' | 'now'>;

function announceEstop(deps: EstopDependencies, state: EstopState): EstopState {
  deps.bus.publish({ type: 'system.estop', ts: deps.now().toISOString(), state });
  return state;
}

export function recordEstop(deps: EstopDependencies, action: 'trigger' | 'reset', triggeredBy: EstopTrigger | null, reason: string): EstopState {
  return announceEstop(deps, deps.store.recordEstop(action, triggeredBy, reason, deps.now().toISOString()));
}

/** The runtime's side of the contract; Electron main and the headless host bind these same handlers. */
export function createCommandHandlers(deps: CommandDependencies): CommandHandlers {
  return {
    'app.info': async () => deps.info,
    'runs.list': async ({ limit }) => deps.store.runs.listRuns(limit),
    'estop.status': async () => deps.store.estopState(),
    'estop.trigger': async ({ reason }) => recordEstop(deps, 'trigger', 'operator', reason),
    'estop.reset': async () => recordEstop(deps, 'reset', null, 'Re-armed by the operator'),
    'settings.get': async () => deps.store.getSettings(),
    'settings.update': async (patch) => deps.store.updateSettings(patch),
  };
}
