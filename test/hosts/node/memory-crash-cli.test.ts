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
  it('is not kept when the run is killed right after `step.completed` (its outcome was never accepted); resumed to completion, the run keeps it once', async () => {
    // The step's answer is the fact; every request after it hangs until the run is resumed.
    let hang = true;
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'notes', description: 'read the expedition notes' }, { id: 'report', description: 'report the code', dependencies: ['notes'] }]);
        if (request.purpose === 'step' && stepIdOf(request) === 'notes') return { content: FACT };
        if (hang) return { hang: true };
        return { content: request.purpose === 'final' ? 'The code is in the notes.' : 'Reported the code.' };
      },
    });
    const dataDir = tempDir();
    const workspace = tempDir();
    const flags = ['--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--approve', 'auto', '--verify', 'off', '--json'];
    const run = spawnArchon(['run', 'Read the expedition notes', ...flags], { OPENAI_API_KEY: '' });
    const lines = createInterface({ input: run.child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      const event = RunEventSchema.parse(JSON.parse(line));
      if (event.type === 'step.completed' && event.stepId === 'notes') run.child.kill('SIGKILL');
    });
    const killed = await run.done;
    expect(killed.status, killed.stderr).toBeNull();

    const runId = onlyRunId(dataDir) as string;
    const facts = () => {
      const listed = runArchon(['memory', 'list', '--kind', 'fact', '--json', '--data-dir', dataDir]);
      expect(listed.status, listed.stderr).toBe(0);
      return listed.stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { text: string; source: { runId: string; stepId: string } | null });
    };
    expect(facts()).toEqual([]);

    hang = false;
    const resumed = await spawnArchon(['resume', runId, ...flags], { OPENAI_API_KEY: '' }).done;
    expect(resumed.status, resumed.stderr).toBe(0);
    const kept = facts();
    expect(kept.filter((fact) => fact.source?.stepId === 'notes')).toEqual([expect.objectContaining({ text: `read the expedition notes\nResult: ${FACT}`, source: { runId, stepId: 'notes' } })]);
    expect(kept.map((fact) => fact.source?.stepId).sort()).toEqual(['notes', 'report']);
  }, 120_000);
});
