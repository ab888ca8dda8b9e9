import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileEffectSchema, RESTORE_FILE } from '../../../src/shared/schemas/file-effect';
import { useTempDirs } from '../../support/temp-dir';
import { catalogueTools, usePools } from '../../support/tools';

const tempDir = useTempDirs();
const openPool = usePools();
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const call = { signal: new AbortController().signal, timeoutMs: 10_000 };

describe('write_file effects and the undo operation', () => {
  it('a write reports what it replaced; restoring puts the previous content back, and deleting removes a created file', async () => {
    const workspace = tempDir();
    writeFileSync(join(workspace, 'a.txt'), 'before');
    const pool = openPool(workspace);
    const overwrite = await pool.call('write_file', { path: 'a.txt', content: 'after' }, call);
    const created = await pool.call('write_file', { path: 'sub/b.txt', content: 'new' }, call);
    expect(FileEffectSchema.parse(overwrite.metadata.effect)).toEqual({ path: 'a.txt', existed: true, previousSha256: sha256('before'), previousBase64: Buffer.from('before').toString('base64'), newSha256: sha256('after') });
    expect(FileEffectSchema.parse(created.metadata.effect)).toEqual({ path: 'sub/b.txt', existed: false, previousSha256: null, newSha256: sha256('new') });

    expect((await pool.call(RESTORE_FILE, { path: 'a.txt', expectedSha256: sha256('after'), contentBase64: Buffer.from('before').toString('base64') }, call)).status).toBe('success');
    expect((await pool.call(RESTORE_FILE, { path: 'sub/b.txt', expectedSha256: sha256('new'), contentBase64: null }, call)).status).toBe('success');
    expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('before');
    expect(existsSync(join(workspace, 'sub/b.txt'))).toBe(false);
  });

  it('a file changed since is left as it is; a link to a file outside is neither followed nor removed', async () => {
    const root = tempDir();
    const workspace = join(root, 'workspace');
    mkdirSync(workspace);
    writeFileSync(join(root, 'outside.txt'), 'outside');
    symlinkSync(join(root, 'outside.txt'), join(workspace, 'link.txt'));
    writeFileSync(join(workspace, 'a.txt'), 'edited by a person');
    const pool = openPool(workspace);
    const changed = await pool.call(RESTORE_FILE, { path: 'a.txt', expectedSha256: sha256('after'), contentBase64: null }, call);
    expect(changed).toMatchObject({ status: 'denied', content: expect.stringContaining('changed since the run wrote it') });
    expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('edited by a person');
    const link = await pool.call(RESTORE_FILE, { path: 'link.txt', expectedSha256: sha256('outside'), contentBase64: null }, call);
    expect(link.status).toBe('denied');
    expect(readFileSync(join(workspace, 'link.txt'), 'utf8')).toBe('outside');
    expect(readFileSync(join(root, 'outside.txt'), 'utf8')).toBe('outside');
  });

  it('a model cannot call the undo operation by name: it is no catalogue tool', () => {
    expect(catalogueTools().get(RESTORE_FILE)).toBeUndefined();
  });
});
