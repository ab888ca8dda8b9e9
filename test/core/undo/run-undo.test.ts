import { createHash, randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ArchonRuntime } from '../../../src/core/runtime';
import { previewUndo } from '../../../src/core/undo/run-undo';
import { RunOptionsSchema } from '../../../src/shared/schemas/run';
import { useRuntimes } from '../../support/runtime';
import { useTempDirs } from '../../support/temp-dir';

const openRuntime = useRuntimes();
const tempDir = useTempDirs();

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A finished run in a fresh workspace that made each write in turn (`before` null: the file was new); the files hold what it left. */
function runThatWrote(runtime: ArchonRuntime, writes: { path: string; before: string | null; after: string }[]): { runId: string; workspace: string } {
  const workspace = tempDir();
  const runId = randomUUID();
  const options = RunOptionsSchema.parse({ modelUrl: 'http://127.0.0.1:9/v1', model: 'm', policy: 'balanced', concurrency: 1, maxTokens: null, maxCostUsd: null, workspace, maxIterations: 10 });
  runtime.store.runs.createRun({ id: runId, goal: 'g', policy: 'balanced', options, now: new Date().toISOString() });
  writes.forEach(({ path, before, after }, index) => {
    writeFileSync(join(workspace, path), after);
    const previous = before === null ? {} : { previousBase64: Buffer.from(before).toString('base64') };
    runtime.store.runs.fileEffects.record(runId, `call-${index}`, { path, existed: before !== null, previousSha256: before === null ? null : sha256(before), ...previous, newSha256: sha256(after) });
  });
  return { runId, workspace };
}

describe('previewUndo', () => {
  it('offers to restore and delete the files as the run left them, last first', () => {
    const runtime = openRuntime();
    const { runId } = runThatWrote(runtime, [
      { path: 'NOTES.md', before: 'old notes\n', after: 'new notes\n' },
      { path: 'draft.txt', before: null, after: 'draft\n' },
    ]);
    const steps = previewUndo(runtime.store.runs, runId);
    expect(steps.map((step) => [step.action, step.path])).toEqual([
      ['delete', 'draft.txt'],
      ['restore', 'NOTES.md'],
    ]);
    expect(steps[1]?.diff).toContain('+old notes');
  });

  it('says up front that a file changed or deleted since the run will be left as it is, as revert would leave it', () => {
    const runtime = openRuntime();
    const { runId, workspace } = runThatWrote(runtime, [
      { path: 'NOTES.md', before: 'old notes\n', after: 'new notes\n' },
      { path: 'draft.txt', before: null, after: 'draft\n' },
      { path: 'kept.txt', before: 'kept\n', after: 'kept, edited\n' },
    ]);
    writeFileSync(join(workspace, 'NOTES.md'), 'notes a later run wrote\n');
    rmSync(join(workspace, 'draft.txt'));
    expect(previewUndo(runtime.store.runs, runId)).toEqual([
      { path: 'kept.txt', action: 'restore', diff: expect.stringContaining('+kept') },
      { path: 'draft.txt', action: 'changed', diff: 'draft.txt was deleted since (by a later run or by hand): it will be left as it is' },
      { path: 'NOTES.md', action: 'changed', diff: 'NOTES.md was changed since (by a later run or by hand): it will be left as it is' },
    ]);
  });

  it('follows a file written twice back through both writes, and leaves both when it changed since', () => {
    const runtime = openRuntime();
    const { runId, workspace } = runThatWrote(runtime, [
      { path: 'NOTES.md', before: 'v0\n', after: 'v1\n' },
      { path: 'NOTES.md', before: 'v1\n', after: 'v2\n' },
    ]);
    expect(previewUndo(runtime.store.runs, runId).map((step) => step.action)).toEqual(['restore', 'restore']);
    writeFileSync(join(workspace, 'NOTES.md'), 'v3\n');
    expect(previewUndo(runtime.store.runs, runId)).toEqual([{ path: 'NOTES.md', action: 'changed', diff: expect.stringContaining('it will be left as it is') }]);
  });
});
