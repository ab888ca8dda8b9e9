import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { planReply, startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

/*
 * Red team: Archon run by root from its home folder, so the data dir and the audit key folder lie
 * inside the workspace, hidden under empty tmpfs mounts. A command keeping root's capabilities
 * unmounts them and reads the key. Needs root: as any other user bubblewrap keeps no capability.
 */

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const asRoot = process.getuid?.() === 0;

const eventsOf = (stdout: string): RunEvent[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => RunEventSchema.parse(JSON.parse(line)));

function outputOf(events: RunEvent[], stepId: string): string {
  const completed = events.find((event) => event.type === 'tool.completed' && event.stepId === stepId);
  return completed?.type === 'tool.completed' ? completed.content : '';
}

describe.skipIf(!asRoot)('red team: root running Archon from its home folder (needs root)', () => {
  it('a sandboxed command has no capability, cannot unmount the tmpfs over the data dir or the key folder, and reads no key', async () => {
    const home = tempDir();
    const dataDir = join(home, '.archon-data');
    const keyDir = join(home, '.config', 'archon-audit-keys');
    mkdirSync(join(home, 'notes'));
    writeFileSync(join(home, 'notes', 'todo.txt'), 'work');
    server = await startModelServer({
      reply: (request) =>
        request.purpose === 'plan'
          ? planReply([
              { id: 'caps', description: 'caps', tool: 'run_command', args: { command: "grep -E '^(CapEff|NoNewPrivs)' /proc/self/status" } },
              { id: 'unmount', description: 'unmount', tool: 'run_command', args: { command: `umount ${dataDir}; umount ${keyDir}; ls -a ${dataDir} ${keyDir}; cat ${keyDir}/*` } },
            ])
          : { content: 'done' },
    });
    const run = spawnArchon(['run', 'attack', '--model-url', server.url, '--data-dir', dataDir, '--workspace', home, '--policy', 'permissive', '--approve', 'auto', '--json'], { HOME: home, ARCHON_AUDIT_KEY_DIR: keyDir, OPENAI_API_KEY: '' });
    const result = await run.done;
    expect(result.status, result.stderr).toBe(0);
    const events = eventsOf(result.stdout);

    const unmount = outputOf(events, 'unmount');
    expect(unmount).toMatch(/must be superuser|Operation not permitted/);
    expect(unmount).not.toContain('archon.db');
    const key = readdirSync(keyDir).find((name) => name.endsWith('.key')) as string;
    expect(unmount).not.toContain(key);
    expect(unmount).not.toContain(readFileSync(join(keyDir, key), 'utf8').trim());
    expect(outputOf(events, 'caps')).toMatch(/CapEff:\s+0000000000000000/);
    expect(outputOf(events, 'caps')).toMatch(/NoNewPrivs:\s+1/);
  });
});
