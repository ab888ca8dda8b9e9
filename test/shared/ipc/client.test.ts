import { describe, expect, it } from 'vitest';
import { ArchonError } from '../../../src/shared/errors';
import { createArchonClient, type Transport } from '../../../src/shared/ipc/client';
import { dispatchCommand } from '../../../src/shared/ipc/dispatch';
import { useServices } from '../../support/runtime';

const openServices = useServices();

function inProcessTransport(handlers: Parameters<typeof dispatchCommand>[0], events: ((event: unknown) => void)[]): Transport {
  return {
    invoke: (name, input) => dispatchCommand(handlers, name, input, { signal: new AbortController().signal }),
    subscribe(listener) {
      events.push(listener);
      return () => undefined;
    },
    onConnectionChange: () => () => undefined,
  };
}

describe('createArchonClient', () => {
  it('calls commands by name and throws their typed errors', async () => {
    const { services } = openServices();
    const client = createArchonClient(inProcessTransport(services.handlers, []));
    expect((await client.commands['settings.update']({ theme: 'dark' })).theme).toBe('dark');
    const failure = await client.commands['runs.list']({ limit: -1 }).catch((error: unknown) => error);
    expect(ArchonError.isInstance(failure)).toBe(true);
    expect((failure as ArchonError).code).toBe('VALIDATION_FAILED');
  });

  it('hands listeners only events that match the schema', () => {
    const { services } = openServices();
    const emit: ((event: unknown) => void)[] = [];
    const heard: unknown[] = [];
    createArchonClient(inProcessTransport(services.handlers, emit)).onEvent((event) => heard.push(event));
    const valid = { type: 'system.estop', ts: 'now', state: { latched: true, since: 'now', triggeredBy: 'cli', reason: 'x' } };
    emit[0]?.({ type: 'system.estop', ts: 'now' });
    emit[0]?.(valid);
    expect(heard).toEqual([valid]);
  });
});
