import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../src/shared/schemas/events';
import { planReply, startModelServer, toolMessagesOf, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { type CliResult, eventsOf, spawnArchon, spawnArchonAnswering } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await server?.close();
  server = undefined;
});

/** A plan of one step that writes a file: under balanced, the plan, the write and the final answer are asked. */
function writeNote(request: RecordedRequest): ScriptedReply {
  if (request.purpose === 'plan') return planReply([{ id: 'note', description: 'write the note' }]);
  if (request.purpose === 'step' && toolMessagesOf(request).length === 0) return { toolCalls: [{ name: 'write_file', arguments: { path: 'note.txt', content: 'hi' } }] };
  return { content: 'written' };
}

const resolvedOf = (events: readonly RunEvent[]) => events.filter((event) => event.type === 'approval.resolved');

function deciders(dataDir: string, runId: string): unknown[] {
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    return db.prepare('SELECT kind, decided_by, decided_channel FROM approvals WHERE run_id = ? ORDER BY rowid').all(runId);
  } finally {
    db.close();
  }
}

/** `archon run --approve prompt` with stdin piped: "y" to every approval the terminal asks. */
function runAnsweringYes(args: string[]): Promise<CliResult> {
  const { child, done } = spawnArchonAnswering([...args, '--approve', 'prompt'], () => true);
  children.push(child);
  return done;
}

describe('archon run: who decided each approval', () => {
  it('--approve auto: every approval.resolved says decidedBy "rule", as does every row, and the audit report counts them', async () => {
    server = await startModelServer({ reply: writeNote });
    const dataDir = tempDir();
    const run = await spawnArchon(['run', 'write a note', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--json']).done;
    expect(run.status, run.stderr).toBe(0);
    const events = eventsOf(run.stdout);
    const resolved = resolvedOf(events);
    expect(resolved.map((event) => event.type === 'approval.resolved' && event.decidedBy)).toEqual(['rule', 'rule', 'rule']);
    for (const event of resolved) expect(event).not.toHaveProperty('channel');
    const runId = events[0]?.runId as string;
    expect(deciders(dataDir, runId)).toEqual([
      { kind: 'plan', decided_by: 'rule', decided_channel: null },
      { kind: 'tool_call', decided_by: 'rule', decided_channel: null },
      { kind: 'final_answer', decided_by: 'rule', decided_channel: null },
    ]);
    const report = await spawnArchon(['audit', 'report', runId, '--data-dir', dataDir]).done;
    expect(report.stdout).toContain('- Decided by: rule ×3');
  });

  it('--approve prompt: an answer typed at the terminal is the operator\'s, through the terminal', async () => {
    server = await startModelServer({ reply: writeNote });
    const dataDir = tempDir();
    const run = await runAnsweringYes(['run', 'write a note', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--json']);
    expect(run.status, run.stderr).toBe(0);
    const events = eventsOf(run.stdout);
    expect(resolvedOf(events)).toEqual([
      expect.objectContaining({ status: 'approved', decidedBy: 'operator', channel: 'terminal' }),
      expect.objectContaining({ status: 'approved', decidedBy: 'operator', channel: 'terminal' }),
      expect.objectContaining({ status: 'approved', decidedBy: 'operator', channel: 'terminal' }),
    ]);
    expect(deciders(dataDir, events[0]?.runId as string)).toEqual([
      { kind: 'plan', decided_by: 'operator', decided_channel: 'terminal' },
      { kind: 'tool_call', decided_by: 'operator', decided_channel: 'terminal' },
      { kind: 'final_answer', decided_by: 'operator', decided_channel: 'terminal' },
    ]);
  });
});
