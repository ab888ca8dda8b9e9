import { randomUUID } from 'node:crypto';
import type { HostConfirmation } from '../../shared/schemas/host-confirmation';
import type { EventBus } from '../events/event-bus';

/** Told when a confirmation is put to the operator outside the page; the function it returns is told the answer. */
export interface ConfirmationAnnouncer {
  asking(question: { title: string; changes: string[] }): (answer: Exclude<HostConfirmation['state'], 'pending'>) => void;
  /** The questions still waiting, for a page that connects while they wait. */
  waiting(): HostConfirmation[];
}

/**
 * Announces each question on the event bus, which every host forwards to its pages: the page that
 * asked for the change shows what is being confirmed where, and then the answer. Only the questions
 * still waiting are kept, in memory: they are the host's, not a run's.
 */
export function busAnnouncer(bus: Pick<EventBus, 'publish'>, where: HostConfirmation['where'], now: () => Date = () => new Date()): ConfirmationAnnouncer {
  const waiting = new Map<string, HostConfirmation>();
  return {
    asking({ title, changes }) {
      const id = randomUUID();
      const announce = (state: HostConfirmation['state']) => {
        const confirmation = { id, where, title, changes, state };
        if (state === 'pending') waiting.set(id, confirmation);
        else waiting.delete(id);
        bus.publish({ type: 'system.confirmation', ts: now().toISOString(), confirmation });
      };
      announce('pending');
      return announce;
    },
    waiting: () => [...waiting.values()],
  };
}
