import { requestApproval, type GateContext, type GateOutcome, type GateRequest } from './approval-gate';

export const MAX_EDIT_ATTEMPTS = 3;

export type EditCheck<T> = { ok: true; value: T; action: unknown } | { ok: false; reason: string };

export type Verdict<T> =
  | { verdict: 'approve'; scope: 'run_tool' | undefined }
  | { verdict: 'edit'; value: T }
  | { verdict: 'reject'; feedback: string; stop: boolean; expired: boolean }
  | { verdict: 'lock'; outcome: GateOutcome };

/**
 * Asks, and when the answer is an edit, validates it; an invalid edit is refused with its reason
 * and the person is asked again (the new request names the reason), at most MAX_EDIT_ATTEMPTS times.
 */
export async function decide<T>(context: GateContext, request: GateRequest, validate: (edited: unknown) => EditCheck<T>): Promise<Verdict<T>> {
  let current = request;
  for (let attempt = 1; ; attempt++) {
    const outcome = await requestApproval(context, current);
    const { decision } = outcome;
    if (decision.verdict === 'approve') return { verdict: 'approve', scope: decision.scope };
    if (decision.verdict === 'reject') return { verdict: 'reject', feedback: decision.feedback, stop: decision.stop ?? false, expired: outcome.status === 'expired' };
    if (decision.verdict === 'lock') return { verdict: 'lock', outcome };
    const checked = validate(decision.edited);
    if (checked.ok) return { verdict: 'edit', value: checked.value };
    if (attempt >= MAX_EDIT_ATTEMPTS) return { verdict: 'reject', feedback: `The edit was refused ${attempt} times: ${checked.reason}`, stop: false, expired: false };
    current = { ...request, summary: `Your edit was refused: ${checked.reason} — ${request.summary}` };
  }
}
