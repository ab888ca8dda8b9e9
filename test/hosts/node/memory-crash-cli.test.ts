import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { RunEventSchema } from '../../../src/shared/schemas/events';
import { planReply, startModelServer, stepIdOf, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { runArchon, spawnArchon } from '../../support/archon-process';
import { onlyRunId } from '../../support/crash-scenario';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const FACT = 'The Zephyr vault code is 7731-KESTREL.';

describe('a step fact across kill -9', () => {
  it('is in `archon memory list` once `step.completed` was announced, even when the kill lands right after it', async () => {
    // The step's answer is the fact; every request after it hangs, so nothing but the step's own completion could have stored it.
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'notes', description: 'read the expedition notes' }, { id: 'report', description: 'report the code', dependencies: ['notes'] }]);
        return request.purpose === 'step' && stepIdOf(request) === 'notes' ? { content: FACT } : { hang: true };
      },
    });
    const dataDir = tempDir();
    const run = spawnArchon(['run', 'Read the expedition notes', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--verify', 'off', '--json'], { OPENAI_API_KEY: '' });
    const lines = createInterface({ input: run.child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      const event = RunEventSchema.parse(JSON.parse(line));
      if (event.type === 'step.completed' && event.stepId === 'notes') run.child.kill('SIGKILL');
    });
    const killed = await run.done;
    expect(killed.status, killed.stderr).toBeNull();

    const runId = onlyRunId(dataDir) as string;
    const listed = runArchon(['memory', 'list', '--kind', 'fact', '--json', '--data-dir', dataDir]);
    expect(listed.status, listed.stderr).toBe(0);
    const facts = listed.stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { text: string; source: { runId: string; stepId: string } | null });
    expect(facts).toEqual([expect.objectContaining({ text: `read the expedition notes\nResult: ${FACT}`, source: { runId, stepId: 'notes' } })]);
  }, 120_000);
});
