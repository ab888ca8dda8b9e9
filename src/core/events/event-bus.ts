import type { ArchonEvent } from '../../shared/schemas/events';

export type EventListener = (event: ArchonEvent) => void;

/**
 * The one place every announced event passes through. Publishing happens only after the event is
 * stored; a listener that throws cannot stop the others from hearing it.
 */
export class EventBus {
  private readonly listeners = new Set<EventListener>();

  constructor(private readonly onListenerError: (error: unknown, event: ArchonEvent) => void = () => undefined) {}

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(event: ArchonEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        // A faulty subscriber (a closed socket, a destroyed window) must not silence the rest.
        this.onListenerError(error, event);
      }
    }
  }
}
