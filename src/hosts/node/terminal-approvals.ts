import { createInterface } from 'node:readline/promises';
import { ArchonError } from '../../shared/errors';
import type { ApproveMode } from '../../shared/schemas/run';
import { approveAll, denyAll, type ApprovalChannel } from '../../core/approval/approval-channel';

/** Asks at the terminal, one request at a time; anything but "y" or "yes" is a no. */
function terminalPrompt(): ApprovalChannel {
  let queue = Promise.resolve();
  return {
    canRaiseBudgets: true,
    decide(request, { signal }) {
      const answer = queue.then(async () => {
        const prompt = createInterface({ input: process.stdin, output: process.stderr });
        try {
          const reply = await prompt.question(`\nApproval needed (${request.kind}): ${request.summary}\nApprove? [y/N] `, { signal });
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

/** `--approve`: the terminal (default on a TTY), always yes, or always no (default otherwise). */
export function approvalChannelFor(mode: ApproveMode | undefined): ApprovalChannel {
  const chosen = mode ?? (process.stdin.isTTY ? 'prompt' : 'deny');
  if (chosen === 'auto') return approveAll;
  if (chosen === 'deny') return denyAll;
  return terminalPrompt();
}
