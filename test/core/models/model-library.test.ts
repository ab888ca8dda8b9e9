import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MODEL_CATALOG } from '../../../src/core/models/model-catalog';
import { partFileOf } from '../../../src/core/models/model-download';
import { ModelLibrary, modelsDir } from '../../../src/core/models/model-library';
import { CatalogModelSchema, type CatalogModel } from '../../../src/shared/schemas/models';
import { ggufBytes, startModelFileServer, type ModelFileServer } from '../../support/model-file-server';
import { useTempDirs } from '../../support/temp-dir';
import { thrownBy } from '../../support/archon-errors';
import { lockDownload } from '../../../src/core/models/download-lock';

const tempDir = useTempDirs();
let server: ModelFileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A catalogue of one small model, served on loopback. */
async function servedCatalog(): Promise<CatalogModel[]> {
  server = await startModelFileServer(ggufBytes(256 * 1024));
  return [{ name: 'tiny-1b', title: 'Tiny 1B', licence: 'MIT', url: server.url, sizeBytes: server.file.length, sha256: server.sha256, memoryBytes: 1024 }];
}


function ggufFile(dir: string, name: string): string {
  const file = join(dir, name);
  writeFileSync(file, ggufBytes(4096));
  return file;
}

describe('the model catalogue', () => {
  it('holds valid entries with distinct names, each a GGUF file on Hugging Face', () => {
    expect(MODEL_CATALOG.length).toBeGreaterThanOrEqual(4);
    for (const model of MODEL_CATALOG) {
      expect(CatalogModelSchema.parse(model)).toEqual(model);
      expect(model.url).toMatch(/^https:\/\/huggingface\.co\/[^/]+\/[^/]+\/resolve\/main\/[^/]+\.gguf$/);
    }
    expect(new Set(MODEL_CATALOG.map((model) => model.name)).size).toBe(MODEL_CATALOG.length);
  });
});

describe('ModelLibrary', () => {
  it('lists the catalogue as not installed, then pulls a model into <data dir>/models and lists it installed', async () => {
    const dataDir = tempDir();
    const library = new ModelLibrary(dataDir, await servedCatalog());
    expect(library.list()).toEqual([{ name: 'tiny-1b', title: 'Tiny 1B', source: 'catalog', installed: false, path: null, sizeBytes: 256 * 1024, licence: 'MIT', memoryBytes: 1024, partialBytes: 0 }]);

    const pulled = await library.pull('tiny-1b');

    const file = join(modelsDir(dataDir), 'tiny-1b.gguf');
    expect(pulled.download?.file).toBe(file);
    expect(pulled.model).toMatchObject({ name: 'tiny-1b', installed: true, path: file });
    expect(library.list()[0]).toMatchObject({ installed: true, path: file, partialBytes: 0 });
    expect(library.resolveModel('tiny-1b')).toBe(file);
    expect((await library.pull('tiny-1b')).download).toBeNull();
  });

  it('pulls a file from a URL of its own under the given name, and lists it after the catalogue', async () => {
    const dataDir = tempDir();
    const catalog = await servedCatalog();
    const library = new ModelLibrary(dataDir, catalog);
    const source = { url: catalog[0]?.url ?? '', sha256: catalog[0]?.sha256 ?? '' };

    await library.pull('mirror', { source });

    expect(library.list().map((model) => [model.name, model.source, model.installed])).toEqual([
      ['tiny-1b', 'catalog', false],
      ['mirror', 'url', true],
    ]);
    expect(thrownBy(() => library.resolveModel('nothing')).message).toContain('`archon models pull NAME` downloads one');
    await expect(library.pull('tiny-1b', { source })).rejects.toThrow(/tiny-1b is a catalogue model: pull it without --url/);
  });

  it("says to pull a catalogue model that is not downloaded, and an unknown name's way out", () => {
    const library = new ModelLibrary(tempDir());
    const missing = thrownBy(() => library.resolveModel('qwen2.5-1.5b'));
    expect(missing.code).toBe('NOT_FOUND');
    expect(missing.message).toMatch(/^qwen2\.5-1\.5b is not downloaded yet: run `archon models pull qwen2\.5-1\.5b` \(about 986 MB\)\.$/);
    const unknown = thrownBy(() => library.resolveModel('no-such-model'));
    expect(unknown.code).toBe('NOT_FOUND');
    expect(unknown.message).toContain('`archon models list` shows the catalogue');
  });

  it('adds a local GGUF file by its path without copying it, runs it by name, and forgets it on remove without deleting it', () => {
    const dataDir = tempDir();
    const file = ggufFile(tempDir(), 'My-Model.Q4_K_M.gguf');
    const library = new ModelLibrary(dataDir, []);

    const added = library.add(file);

    expect(added).toMatchObject({ name: 'my-model.q4_k_m', source: 'local', installed: true, path: file, sizeBytes: 4096 });
    expect(library.resolveModel('my-model.q4_k_m')).toBe(file);
    expect(JSON.parse(readFileSync(join(modelsDir(dataDir), 'local-models.json'), 'utf8')).models).toEqual([expect.objectContaining({ name: 'my-model.q4_k_m', path: file })]);
    expect(thrownBy(() => library.add(file)).message).toBe('A model named my-model.q4_k_m is already in the library: pass --name with another name.');
    expect(library.add(file, 'again').name).toBe('again');

    rmSync(file);
    expect(library.list().find((model) => model.name === 'again')?.installed).toBe(false);
    expect(thrownBy(() => library.resolveModel('again')).message).toBe(`The model again was added from ${file}, which is no longer there. Put the file back, or \`archon models rm again\` and add it again.`);
    writeFileSync(file, ggufBytes(4096));

    expect(library.remove('again').source).toBe('local');
    expect(existsSync(file)).toBe(true);
    expect(library.list().map((model) => model.name)).toEqual(['my-model.q4_k_m']);
  });

  it('rejects a file that is not GGUF, and a missing one', () => {
    const dir = tempDir();
    const notGguf = join(dir, 'notes.gguf');
    writeFileSync(notGguf, 'GGML is not GGUF');
    const library = new ModelLibrary(tempDir(), []);

    const error = thrownBy(() => library.add(notGguf));
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toBe(`${notGguf} is not a GGUF model: it does not start with the bytes "GGUF". Add a .gguf file (llama.cpp's model format).`);
    expect(thrownBy(() => library.add(join(dir, 'absent.gguf'))).code).toBe('NOT_FOUND');
    expect(library.list()).toEqual([]);
  });

  it('resolves a path as it is, checking it is GGUF', () => {
    const dir = tempDir();
    const file = ggufFile(dir, 'model.gguf');
    const library = new ModelLibrary(tempDir(), []);
    expect(library.resolveModel(file)).toBe(file);
    writeFileSync(join(dir, 'text.gguf'), 'hello');
    expect(thrownBy(() => library.resolveModel(join(dir, 'text.gguf'))).code).toBe('VALIDATION_FAILED');
    expect(thrownBy(() => library.resolveModel(join(dir, 'none.gguf'))).code).toBe('NOT_FOUND');
    // A relative path means whatever folder a host runs in: only a whole one is taken (the CLI makes its own whole).
    expect(thrownBy(() => library.resolveModel('../elsewhere/model.gguf'))).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringMatching(/is not a full path/) });
  });

  it('removes a pulled model with any interrupted part, and says when there is nothing to remove', async () => {
    const dataDir = tempDir();
    const library = new ModelLibrary(dataDir, await servedCatalog());
    await library.pull('tiny-1b');
    const file = join(modelsDir(dataDir), 'tiny-1b.gguf');
    writeFileSync(partFileOf(file), 'left over');

    expect(library.remove('tiny-1b')).toMatchObject({ name: 'tiny-1b', installed: true, partialBytes: 9 });

    expect(existsSync(file)).toBe(false);
    expect(existsSync(partFileOf(file))).toBe(false);
    expect(library.list()[0]?.installed).toBe(false);
    expect(thrownBy(() => library.remove('tiny-1b')).message).toBe('tiny-1b is not installed: there is nothing to remove.');
    expect(thrownBy(() => library.remove('unknown')).code).toBe('NOT_FOUND');
  });

  it('does not remove a model while a pull holds it, and says so', async () => {
    const dataDir = tempDir();
    const library = new ModelLibrary(dataDir, await servedCatalog());
    await library.pull('tiny-1b');
    const file = join(modelsDir(dataDir), 'tiny-1b.gguf');
    const release = lockDownload(partFileOf(file), 'tiny-1b');
    try {
      expect(thrownBy(() => library.remove('tiny-1b')).message).toBe(`tiny-1b is being pulled by another process (PID ${process.pid}). Wait for it to finish, or stop it, then try again.`);
      expect(existsSync(file)).toBe(true);
    } finally {
      release();
    }
    library.remove('tiny-1b');
    expect(existsSync(file)).toBe(false);
  });

  it('says how to recover from a damaged list of added models', () => {
    const dataDir = tempDir();
    mkdirSync(modelsDir(dataDir), { recursive: true });
    const index = join(modelsDir(dataDir), 'local-models.json');
    writeFileSync(index, '{"models": [{"name": "x", "path": "relative.gguf", "addedAt": ""}]}');
    const error = thrownBy(() => new ModelLibrary(dataDir, []).list());
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toBe(`The list of added models ${index} is damaged: models.0.path: an absolute path. Remove it and add the files again with \`archon models add\`.`);
  });

  it('lists an interrupted pull with the bytes it resumes from', () => {
    const dataDir = tempDir();
    mkdirSync(modelsDir(dataDir), { recursive: true });
    writeFileSync(join(modelsDir(dataDir), 'qwen2.5-1.5b.gguf.part'), Buffer.alloc(100));
    const listed = new ModelLibrary(dataDir).list().find((model) => model.name === 'qwen2.5-1.5b');
    expect(listed).toMatchObject({ installed: false, partialBytes: 100 });
  });
});
