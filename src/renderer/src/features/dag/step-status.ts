import type { StepStatus } from '../../../../shared/schemas/run';

/** A step's status in words: one its paused run stopped waits for Resume, so it says "paused". */
export function stepStatusText(status: StepStatus, runPaused: boolean): string {
  return status === 'stopped' && runPaused ? 'paused' : status.replace('_', ' ');
}
