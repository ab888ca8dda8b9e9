import { randomUUID } from 'node:crypto';
import type { HostConfirmation } from '../../shared/schemas/host-confirmation';
import type { EventBus } from '../events/event-bus';

/** Told when a confirmation is put to the operator outside the page; the function it returns is told the answer. */
export interface ConfirmationAnnouncer {
  asking(question: { title: string; changes: string[] }): (allowed: boolean) => void;
}

/**
 * Announces each question on the event bus, which every host forwards to its pages: the page that
 * asked for the change shows what is being confirmed where, and then the answer. Nothing is stored;
 * the question and its answer are the host's, not a run's.
 */
export function busAnnouncer(bus: Pick<EventBus, 'publish'>, where: HostConfirmation['where'], now: () => Date = () => new Date()): ConfirmationAnnouncer {
  return {
    asking({ title, changes }) {
      const id = randomUUID();
      const announce = (state: HostConfirmation['state']) => bus.publish({ type: 'system.confirmation', ts: now().toISOString(), confirmation: { id, where, title, changes, state } });
      announce('pending');
      return (allowed) => announce(allowed ? 'allowed' : 'refused');
    },
  };
}
