import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, isAbsolute, join, resolve, sep } from 'node:path';
import { z } from 'zod';
import { ArchonError, describeZodError } from '../../shared/errors';
import { ModelNameSchema, type CatalogModel, type LibraryModel } from '../../shared/schemas/models';
import { formatBytes } from '../../shared/byte-size';
import { modelCatalog } from './model-catalog';
import { downloadModel, partFileOf, partSourceOf, type DownloadOptions, type DownloadResult, type DownloadTarget } from './model-download';
import { GGUF_EXTENSION, hasGgufMagic } from './gguf-file';
import { lockDownload } from './download-lock';

/** A local file the operator added: recorded where it is, never copied. */
const LocalModelSchema = z.object({ name: ModelNameSchema, path: z.string().refine(isAbsolute, 'an absolute path'), addedAt: z.string() });
const LocalIndexSchema = z.object({ models: z.array(LocalModelSchema) });
type LocalIndex = z.infer<typeof LocalIndexSchema>;

const INDEX_FILE = 'local-models.json';

/** A GGUF file to pull that is not in the catalogue (a mirror, a test server). */
export interface PullSource {
  url: string;
  sha256: string;
}

export interface PullResult {
  model: LibraryModel;
  /** Null when the model was already installed. */
  download: DownloadResult | null;
}

/** Where the library keeps its files: `<data dir>/models/`. */
export function modelsDir(dataDir: string): string {
  return join(dataDir, 'models');
}

function sizeOrNull(file: string): number | null {
  try {
    return statSync(file).size;
  } catch {
    return null;
  }
}

function modelName(name: string): string {
  const parsed = ModelNameSchema.safeParse(name);
  if (!parsed.success) throw new ArchonError('VALIDATION_FAILED', `"${name}" is not a model name: ${describeZodError(parsed.error)}.`);
  return parsed.data;
}

/** The name a local file is added under when none is given: its file name, made a model name. */
function nameFromFile(file: string): string {
  const stem = basename(file).replace(/\.gguf$/i, '').toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/\.{2,}/g, '.');
  return stem.replace(/^[^a-z0-9]+/, '').slice(0, 64);
}

/** Whether the text names a file rather than a library model (model names end in no `.gguf` and hold no separator). */
/** A model given as a file rather than a library name: it ends in .gguf or holds a path separator. */
export function isModelPath(nameOrPath: string): boolean {
  return nameOrPath.toLowerCase().endsWith(GGUF_EXTENSION) || nameOrPath.includes('/') || nameOrPath.includes(sep);
}

const HOW_TO_GET = '`archon models list` shows the catalogue; `archon models pull NAME` downloads one, `archon models add PATH.gguf` adds a file you have.';

/**
 * The models the built-in engine runs: catalogue models pulled into `<data dir>/models/NAME.gguf`,
 * files pulled from a URL of their own beside them, and local files the operator added, recorded
 * by path in `local-models.json`.
 */
export class ModelLibrary {
  readonly dir: string;

  constructor(
    dataDir: string,
    private readonly catalog: readonly CatalogModel[] = modelCatalog(),
  ) {
    this.dir = modelsDir(dataDir);
  }

  private fileOf(name: string): string {
    return join(this.dir, `${name}${GGUF_EXTENSION}`);
  }

  private get indexFile(): string {
    return join(this.dir, INDEX_FILE);
  }

  private readIndexJson(): unknown {
    try {
      return JSON.parse(readFileSync(this.indexFile, 'utf8'));
    } catch (error) {
      throw new ArchonError('CONFIG_INVALID', `The list of added models ${this.indexFile} cannot be read (${(error as Error).message}). Remove it and add the files again with \`archon models add\`.`);
    }
  }

  private readIndex(): LocalIndex {
    if (!existsSync(this.indexFile)) return { models: [] };
    const parsed = LocalIndexSchema.safeParse(this.readIndexJson());
    if (!parsed.success) throw new ArchonError('CONFIG_INVALID', `The list of added models ${this.indexFile} is damaged: ${describeZodError(parsed.error)}. Remove it and add the files again with \`archon models add\`.`);
    return parsed.data;
  }

  private writeIndex(index: LocalIndex): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const temporary = `${this.indexFile}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(index, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, this.indexFile);
  }

  private downloaded(name: string, title: string, source: 'catalog' | 'url', catalog?: CatalogModel): LibraryModel {
    const file = this.fileOf(name);
    const size = sizeOrNull(file);
    return {
      name,
      title,
      source,
      installed: size !== null,
      path: size === null ? null : file,
      sizeBytes: size ?? catalog?.sizeBytes ?? null,
      licence: catalog?.licence ?? null,
      memoryBytes: catalog?.memoryBytes ?? null,
      partialBytes: sizeOrNull(partFileOf(file)) ?? 0,
    };
  }

  /** Files pulled with a URL of their own (or interrupted pulls of them), by the names in the folder. */
  private pulledFromUrls(): string[] {
    const names = existsSync(this.dir) ? readdirSync(this.dir) : [];
    const stems = names.map((file) => file.replace(/\.part$/, '')).filter((file) => file.endsWith(GGUF_EXTENSION)).map((file) => file.slice(0, -GGUF_EXTENSION.length));
    return [...new Set(stems)].filter((name) => ModelNameSchema.safeParse(name).success && !this.catalog.some((model) => model.name === name)).sort();
  }

  /** The catalogue with each model's installed state, then the models pulled from URLs, then the local files added. */
  list(): LibraryModel[] {
    const local = this.readIndex().models.map(
      (model): LibraryModel => ({ name: model.name, title: basename(model.path), source: 'local', installed: existsSync(model.path), path: model.path, sizeBytes: sizeOrNull(model.path), licence: null, memoryBytes: null, partialBytes: 0 }),
    );
    return [
      ...this.catalog.map((model) => this.downloaded(model.name, model.title, 'catalog', model)),
      ...this.pulledFromUrls().map((name) => this.downloaded(name, name, 'url')),
      ...local.sort((a, b) => a.name.localeCompare(b.name)),
    ];
  }

  private find(name: string): LibraryModel | undefined {
    return this.list().find((model) => model.name === name);
  }

  /** Downloads a catalogue model, or with `source` any GGUF file under a name of the operator's; resumes an interrupted pull. */
  async pull(name: string, options: DownloadOptions & { source?: PullSource } = {}): Promise<PullResult> {
    const target = this.pullTarget(modelName(name), options.source);
    const existing = this.find(target.name);
    if (existing?.installed) return { model: existing, download: null };
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const download = await downloadModel(target, options);
    return { model: this.find(target.name) as LibraryModel, download };
  }

  private pullTarget(name: string, source: PullSource | undefined): DownloadTarget {
    const catalog = this.catalog.find((model) => model.name === name);
    if (source) {
      if (catalog) throw new ArchonError('VALIDATION_FAILED', `${name} is a catalogue model: pull it without --url, or store the file under another name.`);
      if (this.readIndex().models.some((model) => model.name === name)) throw new ArchonError('VALIDATION_FAILED', `${name} is a local model you added: store the download under another name.`);
      return { name, url: source.url, sha256: source.sha256, file: this.fileOf(name) };
    }
    if (!catalog) throw new ArchonError('NOT_FOUND', `There is no model ${name} in the catalogue. ${HOW_TO_GET} For another GGUF file, pass --url URL --sha256 HEX.`);
    return { name, url: catalog.url, sha256: catalog.sha256, file: this.fileOf(name), sizeBytes: catalog.sizeBytes, memoryBytes: catalog.memoryBytes };
  }

  /** Records a local GGUF file under `name` (default: from its file name); the file stays where it is. */
  add(file: string, name?: string): LibraryModel {
    const path = resolve(file);
    if (!statSync(path, { throwIfNoEntry: false })?.isFile()) throw new ArchonError('NOT_FOUND', `There is no file ${path}. Give the path of a .gguf model file.`);
    if (!hasGgufMagic(path)) throw new ArchonError('VALIDATION_FAILED', `${path} is not a GGUF model: it does not start with the bytes "GGUF". Add a .gguf file (llama.cpp's model format).`);
    const chosen = modelName(name ?? nameFromFile(path));
    if (this.find(chosen)) throw new ArchonError('VALIDATION_FAILED', `A model named ${chosen} is already in the library: pass --name with another name.`);
    const index = this.readIndex();
    this.writeIndex({ models: [...index.models, { name: chosen, path, addedAt: new Date().toISOString() }] });
    return this.find(chosen) as LibraryModel;
  }

  /** Deletes a pulled model's file (and any interrupted part), or forgets an added local file without touching it; returns the model as it was. */
  remove(name: string): LibraryModel {
    const model = this.find(name);
    if (!model) throw new ArchonError('NOT_FOUND', `There is no model ${name} in the library. ${HOW_TO_GET}`);
    if (model.source === 'local') {
      const index = this.readIndex();
      this.writeIndex({ models: index.models.filter((entry) => entry.name !== name) });
      return model;
    }
    if (!model.installed && model.partialBytes === 0) throw new ArchonError('NOT_FOUND', `${name} is not installed: there is nothing to remove.`);
    // Not under a pull of another process: it would go on writing a part that is gone.
    const release = lockDownload(partFileOf(this.fileOf(name)), name);
    try {
      rmSync(this.fileOf(name), { force: true });
      rmSync(partFileOf(this.fileOf(name)), { force: true });
      rmSync(partSourceOf(partFileOf(this.fileOf(name))), { force: true });
    } finally {
      release();
    }
    return model;
  }

  /** The absolute path of the .gguf file to run: a library model's, or a path given as it is (checked to be GGUF). */
  resolveModel(nameOrPath: string): string {
    if (isModelPath(nameOrPath)) return this.resolvePath(nameOrPath);
    const model = this.find(nameOrPath);
    if (model?.installed && model.path) return model.path;
    if (!model) throw new ArchonError('NOT_FOUND', `There is no model ${nameOrPath} in the library. ${HOW_TO_GET}`);
    if (model.source === 'local') throw new ArchonError('NOT_FOUND', `The model ${model.name} was added from ${model.path ?? '?'}, which is no longer there. Put the file back, or \`archon models rm ${model.name}\` and add it again.`);
    if (model.source === 'url') throw new ArchonError('NOT_FOUND', `${model.name} is not downloaded yet: run \`archon models pull ${model.name} --url URL --sha256 HEX\` again; it resumes.`);
    throw new ArchonError('NOT_FOUND', `${model.name} is not downloaded yet: run \`archon models pull ${model.name}\` (${model.sizeBytes === null ? 'a download' : `about ${formatBytes(model.sizeBytes)}`}).`);
  }

  /** Only a whole path: what a relative one means depends on the folder a host runs in (the CLI makes its own whole). */
  private resolvePath(path: string): string {
    if (!isAbsolute(path)) throw new ArchonError('VALIDATION_FAILED', `${path} is not a full path: give the whole path of the .gguf file, or a name from \`archon models list\`.`);
    if (!existsSync(path)) throw new ArchonError('NOT_FOUND', `There is no model file ${path}. Give the path of a .gguf file, or a name from \`archon models list\`.`);
    if (!hasGgufMagic(path)) throw new ArchonError('VALIDATION_FAILED', `${path} is not a GGUF model: it does not start with the bytes "GGUF".`);
    return path;
  }
}
