import { createInterface } from 'node:readline/promises';
import { ArchonError } from '../../shared/errors';
import type { ApprovalDecision, EscalationChoice } from '../../shared/schemas/approval';
import type { ApproveMode } from '../../shared/schemas/run';
import { approveAll, denyAll, type ApprovalChannel } from '../../core/approval/approval-channel';
import { terminalText } from './terminal-text';

type Prompt = ReturnType<typeof createInterface>;

/** An escalation: retry, skip, edit (a new description and expected output) or end; anything else ends. */
async function escalationAnswer(prompt: Prompt, signal: AbortSignal): Promise<ApprovalDecision> {
  const reply = (await prompt.question('Retry, skip, edit the step, or end the run? [r/s/e/N] ', { signal })).trim().toLowerCase();
  if (reply === 'r' || reply === 'retry') return { verdict: 'edit', edited: { choice: 'retry' } satisfies EscalationChoice };
  if (reply === 's' || reply === 'skip') return { verdict: 'edit', edited: { choice: 'skip' } satisfies EscalationChoice };
  if (reply === 'e' || reply === 'edit') {
    const description = (await prompt.question('New description of the step: ', { signal })).trim();
    const expected = (await prompt.question('Expected output (optional): ', { signal })).trim();
    if (description !== '') return { verdict: 'edit', edited: { choice: 'edit', description, ...(expected ? { expected_output: expected } : {}) } satisfies EscalationChoice };
  }
  return { verdict: 'reject', feedback: 'Ended at the terminal.' };
}

/** Asks at the terminal, one request at a time; anything but "y" or "yes" is a no (an escalation offers its four choices). */
function terminalPrompt(): ApprovalChannel {
  let queue = Promise.resolve();
  return {
    canRaiseBudgets: true,
    channel: 'terminal',
    decide(request, { signal }) {
      const answer = queue.then(async () => {
        const prompt = createInterface({ input: process.stdin, output: process.stderr });
        try {
          if (request.kind === 'escalation') {
            process.stderr.write(`\nEscalation: ${terminalText(request.summary, { keepNewlines: false })}\n${terminalText(request.explanation.summary)}\n`);
            return await escalationAnswer(prompt, signal);
          }
          const reply = await prompt.question(`\nApproval needed (${request.kind}): ${terminalText(request.summary, { keepNewlines: false })}\nApprove? [y/N] `, { signal });
          if (/^y(es)?$/i.test(reply.trim())) return { verdict: 'approve' as const };
          const feedback = await prompt.question('Feedback for the agent (optional): ', { signal });
          return { verdict: 'reject' as const, feedback: feedback.trim() || 'Rejected at the terminal.' };
        } catch (error) {
          if (signal.aborted) throw new ArchonError('CANCELLED', 'The approval was cancelled.', { cause: error });
          throw error;
        } finally {
          prompt.close();
        }
      });
      queue = answer.then(
        () => undefined,
        () => undefined,
      );
      return answer;
    },
  };
}

/** `--approve`: the terminal (default on a TTY), always yes, or always no (default otherwise); `desk` is only for a detached run. */
export function approvalChannelFor(mode: ApproveMode | 'desk' | undefined): ApprovalChannel {
  if (mode === 'desk') throw new ArchonError('CONFIG_INVALID', '--approve desk is for a run a worker drives: add --detach (and --engine restate), or answer here with prompt, auto or deny.');
  const chosen = mode ?? (process.stdin.isTTY ? 'prompt' : 'deny');
  if (chosen === 'auto') return approveAll;
  if (chosen === 'deny') return denyAll;
  return terminalPrompt();
}
