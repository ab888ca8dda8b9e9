import type { ApprovalDecision, ApprovalRequest, OperatorChannel } from '../../shared/schemas/approval';
import { OutcomeActionSchema } from '../../shared/schemas/goal-contract';

/**
 * The human channel: the only thing that can decide. The app's dialog, the terminal prompt, or the
 * `--approve` flag the operator typed implement it; nothing a model says reaches it. A channel must
 * give up when its signal aborts (the request expired, or the run was stopped).
 */
export interface ApprovalChannel {
  /** Whether a person answers here, who may raise a budget (`--approve auto` never does). */
  readonly canRaiseBudgets: boolean;
  /** Where the person who answers here sits (the app, the terminal, a served page): recorded with each answer as who decided. */
  readonly channel?: OperatorChannel;
  decide(request: ApprovalRequest, options: { signal: AbortSignal }): Promise<ApprovalDecision>;
  /**
   * Set on a channel that answers by a rule the operator chose (the `--approve` flag), never by
   * waiting: the gate then stores the request together with its answer, in one write, and waits for nothing.
   */
  readonly rule?: (request: ApprovalRequest) => ApprovalDecision;
}

/** A channel that answers every request at once by `rule`. */
function ruleChannel(rule: (request: ApprovalRequest) => ApprovalDecision): ApprovalChannel {
  return { canRaiseBudgets: false, rule, decide: async (request) => rule(request) };
}

/**
 * `--approve auto`: yes to every approval, except repeating a call that may already have happened
 * (as it never raises a budget): that needs a person's word; a server's question (elicitation) is
 * declined; an escalation, where recovery has run out, is answered "end" (the run ends failed
 * with its diagnosis) rather than retried unattended; and unmet success criteria are not accepted.
 */
export const approveAll = ruleChannel((request) => {
  if (request.kind === 'uncertain_repeat') return { verdict: 'reject', feedback: 'Not repeated: --approve auto never repeats a call that may already have happened.' };
  if (request.kind === 'elicitation') return { verdict: 'reject', feedback: "Declined: --approve auto never answers a server's questions for the operator." };
  if (request.kind === 'escalation') return { verdict: 'reject', feedback: '--approve auto ends the run at an escalation.' };
  if (request.kind === 'outcome' && hasGaps(request.action)) return { verdict: 'reject', feedback: '--approve auto never accepts unmet success criteria; --accept-gaps does.' };
  return { verdict: 'approve' };
});

function hasGaps(action: unknown): boolean {
  const parsed = OutcomeActionSchema.safeParse(action);
  return !parsed.success || parsed.data.gaps.length > 0;
}

/** `--accept-gaps`: the operator accepted unmet success criteria before the run; the outcome's request is answered yes by that rule. */
export const acceptGapsRule = ruleChannel(() => ({ verdict: 'approve' }));

export const denyAll = ruleChannel(() => ({ verdict: 'reject', feedback: 'Denied: approvals are answered "no" in this run (--approve deny).' }));
