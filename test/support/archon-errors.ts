import { ArchonError } from '../../src/shared/errors';

/** The ArchonError a promise rejects with; anything else (or none) fails the test. */
export async function rejectionOf(promise: Promise<unknown>): Promise<ArchonError> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  if (!ArchonError.isInstance(error)) throw new Error(`expected an ArchonError, got ${String(error)}`);
  return error;
}

/** The ArchonError an action throws; anything else (or none) fails the test. */
export function thrownBy(action: () => unknown): ArchonError {
  try {
    action();
  } catch (error) {
    if (ArchonError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an ArchonError');
}
