import { describe, expect, it } from 'vitest';
import { FAMILY_WRITERS, speaking, type FamilyWriter } from '../../fixtures/dialects/writers';
import { eventsOf, spawnArchon } from '../../support/archon-process';
import { useModelServers } from '../../support/model-servers';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const startServer = useModelServers();

describe('archon run against a model that only speaks its own dialect', () => {
  it('a Qwen3-Coder model behind a server without tool calling completes "compute 6*7" (exit 0) and the dialect is announced', async () => {
    const goal = 'Compute 6*7 with the calculator';
    const server = await startServer({ rejectTools: true, reply: speaking(FAMILY_WRITERS.find((writer) => writer.dialect === 'qwen3-coder') as FamilyWriter, goal) });
    const result = await spawnArchon(['run', goal, '--model-url', server.url, '--data-dir', tempDir(), '--workspace', tempDir(), '--approve', 'auto', '--json']).done;
    expect(result.status).toBe(0);
    const events = eventsOf(result.stdout);
    expect(events.find((event) => event.type === 'model.dialect_detected')).toMatchObject({ dialect: 'qwen3-coder' });
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', answer: expect.stringContaining('42') });
  });
});
