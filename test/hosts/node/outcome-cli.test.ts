import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planReply, startModelServer, stepIdOf, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { eventsOf, spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The planner plans one of the two files the goal names, every time; its step writes it and says so. */
function oneOfTwoFiles(): (request: RecordedRequest) => ScriptedReply {
  const turns = new Map<string, number>();
  return (request) => {
    if (request.purpose === 'plan') return planReply([{ id: 'log', description: 'Write CHANGELOG.md', expected_output: 'the changelog written' }]);
    if (request.purpose === 'final') return { content: 'The changelog is written.' };
    const id = stepIdOf(request) ?? '?';
    const turn = turns.get(id) ?? 0;
    turns.set(id, turn + 1);
    return turn === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: 'CHANGELOG.md', content: '- fixes\n' } }] } : { content: 'CHANGELOG.md is written.' };
  };
}

const GOAL = 'Write CHANGELOG.md and SUMMARY.md for the release.';

describe('archon run: done means done', () => {
  it('unmet criteria under --approve auto exit 1 naming the gap; resume --accept-gaps ends completed_with_gaps, exit 7, listed', async () => {
    server = await startModelServer({ reply: oneOfTwoFiles() });
    const dataDir = tempDir();
    const workspace = tempDir();
    const failed = await spawnArchon(['run', GOAL, '--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--approve', 'auto', '--json'], { OPENAI_API_KEY: '' }).done;
    expect(failed.status, failed.stderr).toBe(1);
    const emitted = eventsOf(failed.stdout);
    expect(emitted.find((event) => event.type === 'outcome.checked')).toMatchObject({ route: 'gaps', gaps: [expect.stringContaining('SUMMARY.md is written')] });
    const runId = emitted[0]?.runId ?? '';
    expect(existsSync(join(workspace, 'CHANGELOG.md'))).toBe(true);

    const accepted = await spawnArchon(['resume', runId, '--data-dir', dataDir, '--approve', 'auto', '--accept-gaps'], { OPENAI_API_KEY: '' }).done;
    expect(accepted.status, accepted.stderr).toBe(7);
    expect(accepted.stderr).toContain('Run completed with gaps the operator accepted:');
    expect(accepted.stderr).toContain('SUMMARY.md is written');
    expect(accepted.stdout).toContain('The changelog is written.');
    const listed = await spawnArchon(['runs', '--data-dir', dataDir], {}).done;
    expect(listed.stdout).toContain('completed_with_gaps');
    const verified = await spawnArchon(['audit', 'verify', '--data-dir', dataDir], {}).done;
    expect(verified.status, verified.stderr).toBe(0);
  });
});
