import { afterEach, describe, expect, it } from 'vitest';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const stores: ArchonStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
});

function openStore(): ArchonStore {
  const store = ArchonStore.open(tempDir());
  stores.push(store);
  return store;
}

const NOW = '2026-01-01T00:00:00.000Z';

describe('ToolDefinitionStore: approval settings bound to the definition they were made against', () => {
  it('a first-seen tool has no settings made against it; a changed one is reported once and its settings go stale until the operator sets them again', () => {
    const store = openStore();
    const { toolDefinitions } = store;
    expect(toolDefinitions.see('s__t', 's', 't', 'h1', NOW)).toEqual({ changedFrom: null, settings: 'unbound' });
    store.updateSettings({ toolApproval: { s__t: 'never' } });
    expect(toolDefinitions.see('s__t', 's', 't', 'h1', NOW)).toEqual({ changedFrom: null, settings: 'bound' });
    expect(toolDefinitions.see('s__t', 's', 't', 'h2', NOW)).toEqual({ changedFrom: 'h1', settings: 'stale' });
    expect(toolDefinitions.see('s__t', 's', 't', 'h2', NOW)).toEqual({ changedFrom: null, settings: 'stale' });
    store.updateSettings({ toolApproval: { s__t: 'default' } });
    expect(toolDefinitions.see('s__t', 's', 't', 'h2', NOW)).toEqual({ changedFrom: null, settings: 'bound' });
  });

  it('a setting made before a tool was ever seen (its name or SERVER__*) does not bind the definition first seen', () => {
    const store = openStore();
    store.updateSettings({ toolApproval: { s__a: 'never', 's__*': 'never' } });
    expect(store.toolDefinitions.see('s__a', 's', 'a', 'a1', NOW).settings).toBe('unbound');
    expect(store.toolDefinitions.see('s__b', 's', 'b', 'b1', NOW).settings).toBe('unbound');
  });

  it('setting a tool’s approval again (by its name or its server’s SERVER__*) binds it to the definition seen now', () => {
    const store = openStore();
    store.toolDefinitions.see('s__a', 's', 'a', 'a1', NOW);
    store.toolDefinitions.see('s__b', 's', 'b', 'b1', NOW);
    store.toolDefinitions.see('s__a', 's', 'a', 'a2', NOW);
    store.toolDefinitions.see('s__b', 's', 'b', 'b2', NOW);
    store.updateSettings({ toolApproval: { s__a: 'never' } });
    expect(store.toolDefinitions.see('s__a', 's', 'a', 'a2', NOW).settings).toBe('bound');
    expect(store.toolDefinitions.see('s__b', 's', 'b', 'b2', NOW).settings).toBe('stale');
    store.updateSettings({ toolApproval: { s__a: 'never', 's__*': 'always' } });
    expect(store.toolDefinitions.see('s__b', 's', 'b', 'b2', NOW).settings).toBe('bound');
  });
});
