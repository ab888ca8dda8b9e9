import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

/*
 * The red-team attack: the key file lies in the workspace, so a tool reads it and hands it to the
 * model encoded. Such a key file is refused before anything starts.
 */

const tempDir = useTempDirs();

describe('--api-key-file inside the workspace', () => {
  it('is refused with exit 2, saying where to put it, named directly or through a link from outside', async () => {
    const workspace = tempDir();
    mkdirSync(join(workspace, 'config'));
    const keyFile = join(workspace, 'config', 'key');
    writeFileSync(keyFile, 'sk-in-workspace-123456\n', { mode: 0o600 });
    const link = join(tempDir(), 'key-link');
    symlinkSync(keyFile, link);
    for (const given of [keyFile, link]) {
      const result = await spawnArchon(['run', 'x', '--model-url', 'http://127.0.0.1:9/v1', '--api-key-file', given, '--workspace', workspace, '--data-dir', tempDir()], { OPENAI_API_KEY: '' }).done;
      expect(result.status, given).toBe(2);
      expect(result.stderr).toContain(`The API key file ${given} is inside the workspace`);
      expect(result.stderr).toContain('Move it outside the workspace');
    }
  });
});
