import { ArchonError } from '../../shared/errors';
import { asStoreError } from '../store/open-database';

const RUN_LEVEL_CODES = new Set(['BUDGET_EXCEEDED', 'ESTOP_LATCHED', 'CANCELLED', 'PAUSED', 'MODEL_UNAVAILABLE', 'DISK_FULL', 'STORE_LOCKED', 'RUN_LEASED']);

/**
 * Errors that end the whole run rather than one step: a stop, an exhausted budget, an outage that
 * pauses it (a full disk or a busy database among them, typed or still as SQLite threw it), a rejection that says stop.
 */
export function isRunLevel(error: unknown): boolean {
  const typed = ArchonError.isInstance(error) ? error : asStoreError(error);
  if (typed === null) return false;
  if (RUN_LEVEL_CODES.has(typed.code)) return true;
  return typed.code === 'APPROVAL_REJECTED' && (typed.details as { stop?: boolean } | undefined)?.stop === true;
}
