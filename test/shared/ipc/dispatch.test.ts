import { describe, expect, it } from 'vitest';
import { ArchonError } from '../../../src/shared/errors';
import { dispatchCommand, type CommandHandlers } from '../../../src/shared/ipc/dispatch';
import { useServices } from '../../support/runtime';

const openServices = useServices();
const context = { signal: new AbortController().signal };

describe('dispatchCommand', () => {
  it('parses the input, applies defaults and returns the output in an envelope', async () => {
    const { services } = openServices();
    const result = await dispatchCommand(services.handlers, 'estop.trigger', {}, context);
    expect(result).toMatchObject({ ok: true, value: { latched: true, reason: 'Emergency stop pressed in the app', triggeredBy: 'operator' } });
  });

  it.each([
    ['a wrong type', 'runs.list', { limit: 'ten' }, /limit/],
    ['an out-of-range value', 'runs.list', { limit: 0 }, /limit/],
    ['an unknown key', 'estop.reset', { everything: true }, /everything|Unrecognized/i],
    ['a non-object', 'settings.update', 'theme=dark', /expected object/i],
    ['a bad URL', 'settings.update', { modelUrl: 'file:///etc/passwd' }, /modelUrl/],
  ])('refuses %s with VALIDATION_FAILED naming the field, and runs nothing', async (_what, name, input, message) => {
    const { runtime, services } = openServices();
    const before = runtime.store.getSettings();
    const result = await dispatchCommand(services.handlers, name, input, context);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe('VALIDATION_FAILED');
      expect(result.error.message).toMatch(message);
    }
    expect(runtime.store.getSettings()).toEqual(before);
  });

  it('refuses an unknown command and lists the known ones', async () => {
    const { services } = openServices();
    const result = await dispatchCommand(services.handlers, 'shell.exec', { command: 'rm -rf /' }, context);
    expect(result).toMatchObject({ ok: false, error: { code: 'UNKNOWN_COMMAND' } });
    if (!result.ok) expect(result.error.message).toContain('estop.trigger');
  });

  it('does not treat inherited object keys as commands', async () => {
    const { services } = openServices();
    const result = await dispatchCommand(services.handlers, 'constructor', {}, context);
    expect(result).toMatchObject({ ok: false, error: { code: 'UNKNOWN_COMMAND' } });
  });

  it('turns a handler failure into a typed error envelope', async () => {
    const { services } = openServices();
    const failing: CommandHandlers = {
      ...services.handlers,
      'runs.list': async () => {
        throw new ArchonError('STORE_LOCKED', 'locked; try again');
      },
      'app.info': async () => {
        throw new TypeError('boom');
      },
    };
    expect(await dispatchCommand(failing, 'runs.list', {}, context)).toEqual({ ok: false, error: { code: 'STORE_LOCKED', message: 'locked; try again' } });
    expect(await dispatchCommand(failing, 'app.info', {}, context)).toMatchObject({ ok: false, error: { code: 'INTERNAL', message: expect.stringContaining('boom') } });
  });

  it('refuses a handler answer that breaks the output schema', async () => {
    const { services } = openServices();
    const lying = { ...services.handlers, 'estop.status': async () => ({ latched: 'yes' }) } as unknown as CommandHandlers;
    expect(await dispatchCommand(lying, 'estop.status', {}, context)).toMatchObject({ ok: false, error: { code: 'INTERNAL' } });
  });
});
