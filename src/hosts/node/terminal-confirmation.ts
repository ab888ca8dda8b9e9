import { createInterface, type Interface } from 'node:readline/promises';
import type { ConfirmationAnnouncer } from '../../core/authority/confirmation-announcer';
import type { OperatorConfirmation } from '../../core/authority/operator-authority';
import { terminalText } from './terminal-text';

export interface TerminalConfirmationOptions {
  /** `archon serve --trust-ui`: the operator lets the page decide. */
  trustUi: boolean;
  input?: NodeJS.ReadableStream & { isTTY?: boolean };
  output?: NodeJS.WritableStream;
  /** Told when a question goes on the terminal and when it is answered, so the page can say where it waits. */
  announcer?: ConfirmationAnnouncer;
}

/** The question on the terminal: "y" or "yes" allows, anything else refuses; a question its asker gave up on is withdrawn. */
async function ask(prompt: Interface, { title, changes }: { title: string; changes: string[] }, signal: AbortSignal): Promise<'allowed' | 'refused' | 'withdrawn'> {
  try {
    // The changes name what the page sent (names, commands, URLs): shown as text, one line each, so none can hide another.
    const listed = changes.map((change) => `  - ${terminalText(change, { keepNewlines: false })}`).join('\n');
    const reply = await prompt.question(`\n${terminalText(title, { keepNewlines: false })}\n${listed}\nAllow? [y/N] `, { signal });
    return /^y(es)?$/i.test(reply.trim()) ? 'allowed' : 'refused';
  } catch {
    return signal.aborted ? 'withdrawn' : 'refused';
  }
}

/**
 * `archon serve`: a change that widens what agents may do is asked on the terminal that started the
 * host, one question at a time; anything but "y" or "yes" is a no. Without a terminal (and without
 * --trust-ui) nobody can answer, so it is refused.
 */
export function terminalConfirmation(options: TerminalConfirmationOptions): OperatorConfirmation {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stderr;
  let queue: Promise<unknown> = Promise.resolve();
  return {
    waiting: () => options.announcer?.waiting() ?? [],
    async confirm({ title, changes }, signal) {
      if (options.trustUi) return true;
      if (!input.isTTY) return false;
      const answer = queue.then(async () => {
        // Given up on while another question held the terminal: it never goes on it.
        if (signal.aborted) return false;
        const prompt = createInterface({ input, output });
        const answered = options.announcer?.asking({ title, changes });
        try {
          const answer = await ask(prompt, { title, changes }, signal);
          answered?.(answer);
          return answer === 'allowed';
        } finally {
          prompt.close();
        }
      });
      queue = answer;
      return answer;
    },
  };
}
