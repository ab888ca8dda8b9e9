import { describe, expect, it } from 'vitest';
import { dispatchCommand } from '../../../src/shared/ipc/dispatch';
import { useServices } from '../../support/runtime';

const openServices = useServices();
const context = () => ({ signal: new AbortController().signal });

describe('memory.* over the contract', () => {
  it('lists by kind, searches by query (no fallback to recent items when nothing matches), edits, pins and forgets; bad input is refused by the contract', async () => {
    const { runtime, services } = openServices();
    const call = (name: string, input: unknown) => dispatchCommand(services.handlers, name, input, context());
    const fact = runtime.store.memory.add({ kind: 'fact', text: 'The ledger sits in the blue folder.' });
    const lesson = runtime.store.memory.add({ kind: 'lesson', text: 'Check totals twice.', evidence: ['run-1'], appliesTo: 'sums' });

    expect(await call('memory.list', {})).toMatchObject({ ok: true, value: [{ id: lesson.id }, { id: fact.id }] });
    expect(await call('memory.list', { kind: 'fact' })).toMatchObject({ ok: true, value: [{ id: fact.id }] });
    expect(await call('memory.list', { query: 'ledger' })).toMatchObject({ ok: true, value: [{ id: fact.id }] });
    expect(await call('memory.list', { query: 'zeppelin' })).toEqual({ ok: true, value: [] });

    expect(await call('memory.update', { id: fact.id, text: 'The ledger sits in the red folder.', pinned: true })).toMatchObject({ ok: true, value: { id: fact.id, text: 'The ledger sits in the red folder.', pinned: true } });
    expect(runtime.store.memory.get(fact.id)).toMatchObject({ text: 'The ledger sits in the red folder.', pinned: true });
    expect(await call('memory.update', { id: fact.id, pinned: false })).toMatchObject({ ok: true, value: { pinned: false } });

    expect(await call('memory.forget', { id: lesson.id })).toEqual({ ok: true, value: { forgotten: true } });
    expect(runtime.store.memory.get(lesson.id)).toBeNull();
    expect(await call('memory.forget', { id: lesson.id })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await call('memory.get', { ids: [lesson.id, fact.id] })).toMatchObject({ ok: true, value: [{ id: fact.id, text: 'The ledger sits in the red folder.' }] });
    expect(await call('memory.get', { ids: [] })).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
    expect(await call('memory.update', { id: fact.id, text: '' })).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
    expect(await call('memory.list', { limit: 0 })).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
  });
});
