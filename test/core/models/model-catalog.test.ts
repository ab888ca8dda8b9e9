import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MODEL_CATALOG, MODEL_CATALOG_ENV, modelCatalog } from '../../../src/core/models/model-catalog';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const MIRRORED = { name: 'mirrored-1b', title: 'Mirrored 1B', licence: 'MIT', url: 'https://models.example.internal/m.gguf', sizeBytes: 1000, sha256: 'a'.repeat(64), memoryBytes: 1_000_000 };

describe('the model catalogue', () => {
  it('is the built-in one unless ARCHON_MODEL_CATALOG names a file of the operator’s own', () => {
    expect(modelCatalog({})).toBe(MODEL_CATALOG);
    const file = join(tempDir(), 'catalog.json');
    writeFileSync(file, JSON.stringify([MIRRORED]));
    expect(modelCatalog({ [MODEL_CATALOG_ENV]: file })).toEqual([MIRRORED]);
  });

  it('refuses a file that cannot be read or is not a catalogue, saying which and what to do', () => {
    const missing = join(tempDir(), 'nowhere.json');
    expect(() => modelCatalog({ [MODEL_CATALOG_ENV]: missing })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringMatching(/ARCHON_MODEL_CATALOG names .*nowhere\.json, which cannot be read \(ENOENT\)\. Fix the file .* or unset ARCHON_MODEL_CATALOG/) }));
    const wrong = join(tempDir(), 'wrong.json');
    writeFileSync(wrong, JSON.stringify([{ ...MIRRORED, sha256: 'short' }]));
    expect(() => modelCatalog({ [MODEL_CATALOG_ENV]: wrong })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringMatching(/which is not a model catalogue \(.*sha256/) }));
  });
});
