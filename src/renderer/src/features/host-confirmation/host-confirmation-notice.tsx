import { useEffect, useId, useState } from 'react';
import type { HostConfirmation } from '../../../../shared/schemas/host-confirmation';
import { useAppStore } from '../../store/use-app-store';

/** What became of a question, as the page says it. */
const ANSWERED: Record<HostConfirmation['state'], string> = {
  pending: 'Waiting in the terminal',
  allowed: 'Allowed in the terminal',
  refused: 'Refused in the terminal',
  withdrawn: 'No longer asked in the terminal',
};

/** How long the answer stays in view once given. */
const ANSWER_SHOWN_MS = 8000;

/** The host's questions to the operator as it announces them: those still waiting, and the last answer. */
function useHostConfirmations() {
  const client = useAppStore((state) => state.client);
  const connected = useAppStore((state) => state.connection === 'connected');
  const [waiting, setWaiting] = useState<HostConfirmation[]>([]);
  const [answered, setAnswered] = useState<HostConfirmation | null>(null);
  // A page that connects (or reconnects) while a question waits learns of it from the host.
  useEffect(() => {
    if (connected) client.commands['host.confirmations']().then(setWaiting, () => undefined);
  }, [client, connected]);
  useEffect(
    () =>
      client.onEvent((event) => {
        if (event.type !== 'system.confirmation') return;
        const { confirmation } = event;
        setWaiting((others) => [...others.filter((other) => other.id !== confirmation.id), ...(confirmation.state === 'pending' ? [confirmation] : [])]);
        if (confirmation.state !== 'pending') setAnswered(confirmation);
      }),
    [client],
  );
  useEffect(() => {
    if (!answered) return;
    const timer = setTimeout(() => setAnswered(null), ANSWER_SHOWN_MS);
    return () => clearTimeout(timer);
  }, [answered]);
  return { waiting, answered, dismiss: () => setAnswered(null) };
}

function WaitingQuestion({ confirmation }: { confirmation: HostConfirmation }) {
  const headingId = useId();
  return (
    <div role="alert" aria-labelledby={headingId} className="host-confirmation">
      <h2 id={headingId}>Confirm in the terminal running archon serve</h2>
      <p>{confirmation.title}</p>
      <ul>
        {confirmation.changes.map((change) => (
          <li key={change}>{change}</li>
        ))}
      </ul>
      <p className="hint">Nothing changes until you answer there.</p>
    </div>
  );
}

/**
 * A change that widens what agents may do waits for the operator's yes outside the page; this says
 * where, with the question, for as long as it waits, and then what was answered.
 */
export function HostConfirmationNotice() {
  const { waiting, answered, dismiss } = useHostConfirmations();
  return (
    <div className="host-confirmations">
      {waiting.map((confirmation) => (
        <WaitingQuestion key={confirmation.id} confirmation={confirmation} />
      ))}
      <div role="status" aria-label="Terminal’s reply" className={answered ? 'host-confirmation' : undefined}>
        {answered && (
          <>
            <span>{ANSWERED[answered.state]}: {answered.title}</span>{' '}
            <button type="button" onClick={dismiss}>
              Dismiss
            </button>
          </>
        )}
      </div>
    </div>
  );
}
