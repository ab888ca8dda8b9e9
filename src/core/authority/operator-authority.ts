import { ArchonError } from '../../shared/errors';
import type { HostConfirmation } from '../../shared/schemas/host-confirmation';

/**
 * A person's yes or no, asked outside the renderer: a native dialog shown by Electron's main
 * process, or the terminal that started `archon serve`. The renderer cannot answer it.
 */
export interface OperatorConfirmation {
  /** False when refused, unanswerable, or cancelled through `signal`. */
  confirm(question: { title: string; changes: string[] }, signal: AbortSignal): Promise<boolean>;
  /** The questions put outside the page that still wait, for a page to show (none where the question is a modal dialog). */
  waiting?(): HostConfirmation[];
}

/** Lets a change that widens what agents may do take effect only once the operator said yes outside the renderer. */
export async function requireOperator(confirmation: OperatorConfirmation, title: string, changes: string[], signal: AbortSignal): Promise<void> {
  if (changes.length === 0) return;
  if (await confirmation.confirm({ title, changes }, signal)) return;
  throw new ArchonError(
    'NOT_CONFIRMED',
    `Not changed: ${changes.join('; ')} widens what agents may do, and the operator did not confirm it outside this page ` +
      '(the app asks in a dialog of its own; `archon serve` asks on its terminal, or trusts the page when started with --trust-ui).',
  );
}
