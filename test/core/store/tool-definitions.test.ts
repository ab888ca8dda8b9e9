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
  it('a changed definition is reported once, and the settings stop applying until a person approves it', () => {
    const { toolDefinitions } = openStore();
    expect(toolDefinitions.see('s__t', 's', 't', 'h1', NOW)).toEqual({ changedFrom: null, settingsApply: true });
    expect(toolDefinitions.see('s__t', 's', 't', 'h1', NOW)).toEqual({ changedFrom: null, settingsApply: true });
    expect(toolDefinitions.see('s__t', 's', 't', 'h2', NOW)).toEqual({ changedFrom: 'h1', settingsApply: false });
    expect(toolDefinitions.see('s__t', 's', 't', 'h2', NOW)).toEqual({ changedFrom: null, settingsApply: false });
    toolDefinitions.bindSettings('s__t', 'h2');
    expect(toolDefinitions.see('s__t', 's', 't', 'h2', NOW)).toEqual({ changedFrom: null, settingsApply: true });
  });

  it('setting a tool’s approval again (by its name or its server’s SERVER__*) binds it to the definition seen now', () => {
    const store = openStore();
    store.toolDefinitions.see('s__a', 's', 'a', 'a1', NOW);
    store.toolDefinitions.see('s__b', 's', 'b', 'b1', NOW);
    store.toolDefinitions.see('s__a', 's', 'a', 'a2', NOW);
    store.toolDefinitions.see('s__b', 's', 'b', 'b2', NOW);
    store.updateSettings({ toolApproval: { s__a: 'never' } });
    expect(store.toolDefinitions.see('s__a', 's', 'a', 'a2', NOW).settingsApply).toBe(true);
    expect(store.toolDefinitions.see('s__b', 's', 'b', 'b2', NOW).settingsApply).toBe(false);
    store.updateSettings({ toolApproval: { s__a: 'never', 's__*': 'always' } });
    expect(store.toolDefinitions.see('s__b', 's', 'b', 'b2', NOW).settingsApply).toBe(true);
  });
});
