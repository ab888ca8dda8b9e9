import type { CommandInput } from '../../../../shared/ipc/contract';
import type { ScheduleState } from '../../../../shared/schemas/run-order';
import { latestOnly } from '../../store/latest-only';
import type { SliceContext } from '../../store/slice';

export type ScheduleInput = CommandInput<'schedules.add'>;

export interface SchedulesSlice {
  /** The schedules the cluster in Settings keeps; null while not known (not loaded yet, or the list failed). */
  schedules: ScheduleState[] | null;
  /** Why the last list, add or remove failed, in the host's words; shown in the Schedules view. */
  schedulesProblem: string | null;
  loadSchedules(): Promise<void>;
  /** Resolves whether the schedule was added, so the form keeps what was refused. */
  addSchedule(input: ScheduleInput): Promise<boolean>;
  removeSchedule(id: string): Promise<void>;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The error `action` failed with, or null. */
async function failureOf(action: () => Promise<unknown>): Promise<string | null> {
  try {
    await action();
    return null;
  } catch (error) {
    return messageOf(error);
  }
}

// Errors stay in the view that asked: with no cluster set, every list fails, and a banner over every view would say so again and again.
export function createSchedulesSlice({ set, client }: SliceContext): SchedulesSlice {
  const reload = latestOnly(
    async () => {
      try {
        return { schedules: await client.commands['schedules.list'](), schedulesProblem: null };
      } catch (error) {
        return { schedules: null, schedulesProblem: messageOf(error) };
      }
    },
    (listed) => set(listed),
  );
  /** Runs the change, then lists again; a failed change's reason outlasts the list's answer. */
  const change = async (action: () => Promise<unknown>) => {
    const problem = await failureOf(action);
    await reload();
    if (problem !== null) set({ schedulesProblem: problem });
    return problem === null;
  };
  return {
    schedules: null,
    schedulesProblem: null,
    loadSchedules: reload,
    addSchedule: (input) => change(() => client.commands['schedules.add'](input)),
    removeSchedule: async (id) => {
      await change(() => client.commands['schedules.remove']({ id }));
    },
  };
}
