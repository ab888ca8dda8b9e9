import { readFileSync } from 'node:fs';
import { ArchonError, describeZodError } from '../../shared/errors';
import { parseJsonOrUndefined } from '../../shared/json';
import { CatalogModelSchema, type CatalogModel } from '../../shared/schemas/models';

const GB = 1_000_000_000;

/**
 * Small instruct models that call tools, in GGUF at Q4_K_M: the ones `archon models pull NAME`
 * fetches. The SHA-256 is the one Hugging Face publishes for the file (its LFS object id); the size is
 * what the disk check plans for, the server's own length wins once it answers.
 */
export const MODEL_CATALOG: readonly CatalogModel[] = CatalogModelSchema.array().parse([
  {
    name: 'qwen2.5-1.5b',
    title: 'Qwen2.5 1.5B Instruct (Q4_K_M)',
    licence: 'Apache-2.0',
    url: 'https://huggingface.co/bartowski/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/Qwen2.5-1.5B-Instruct-Q4_K_M.gguf',
    sizeBytes: 986_000_000,
    sha256: '1adf0b11065d8ad2e8123ea110d1ec956dab4ab038eab665614adba04b6c3370',
    memoryBytes: 2 * GB,
  },
  {
    name: 'granite3.3-2b',
    title: 'IBM Granite 3.3 2B Instruct (Q4_K_M)',
    licence: 'Apache-2.0',
    url: 'https://huggingface.co/bartowski/ibm-granite_granite-3.3-2b-instruct-GGUF/resolve/main/ibm-granite_granite-3.3-2b-instruct-Q4_K_M.gguf',
    sizeBytes: 1_550_000_000,
    sha256: '555b91485955bc96eb445b57dd4bbf8809aa7d8cce7c313f4f8bc5b2340896b4',
    memoryBytes: 3 * GB,
  },
  {
    name: 'smollm3-3b',
    title: 'SmolLM3 3B (Q4_K_M)',
    licence: 'Apache-2.0',
    url: 'https://huggingface.co/bartowski/HuggingFaceTB_SmolLM3-3B-GGUF/resolve/main/HuggingFaceTB_SmolLM3-3B-Q4_K_M.gguf',
    sizeBytes: 1_920_000_000,
    sha256: '519732558d5fa7420ab058e1b776dcfe73da78013c2fe59c7ca43c325ef89132',
    memoryBytes: 4 * GB,
  },
  {
    name: 'llama3.2-3b',
    title: 'Llama 3.2 3B Instruct (Q4_K_M)',
    licence: 'Llama 3.2 Community License',
    url: 'https://huggingface.co/hugging-quants/Llama-3.2-3B-Instruct-Q4_K_M-GGUF/resolve/main/llama-3.2-3b-instruct-q4_k_m.gguf',
    sizeBytes: 2_020_000_000,
    sha256: 'c55a83bfb6396799337853ca69918a0b9bbb2917621078c34570bc17d20fd7a1',
    memoryBytes: 4 * GB,
  },
  {
    name: 'hermes3-3b',
    title: 'Hermes 3 (Llama 3.2 3B) (Q4_K_M)',
    licence: 'Llama 3.2 Community License',
    url: 'https://huggingface.co/bartowski/Hermes-3-Llama-3.2-3B-GGUF/resolve/main/Hermes-3-Llama-3.2-3B-Q4_K_M.gguf',
    sizeBytes: 2_020_000_000,
    sha256: '2e220a14ba4328fee38cf36c2c068261560f999fadb5725ce5c6d977cb5126b5',
    memoryBytes: 4 * GB,
  },
  {
    name: 'granite3.3-8b',
    title: 'IBM Granite 3.3 8B Instruct (Q4_K_M)',
    licence: 'Apache-2.0',
    url: 'https://huggingface.co/bartowski/ibm-granite_granite-3.3-8b-instruct-GGUF/resolve/main/ibm-granite_granite-3.3-8b-instruct-Q4_K_M.gguf',
    sizeBytes: 4_940_000_000,
    sha256: '758fb00abcec89df5cf02932165daf72f0d0b74db5019dbe9f2b3defb1e9295e',
    memoryBytes: 7 * GB,
  },
]);

/** Names a catalogue file of the operator's own (a mirror, other models), offered instead of the built-in one. */
export const MODEL_CATALOG_ENV = 'ARCHON_MODEL_CATALOG';

function catalogProblem(file: string, problem: string): ArchonError {
  return new ArchonError('CONFIG_INVALID', `${MODEL_CATALOG_ENV} names ${file}, ${problem}. Fix the file (a JSON array of models: name, title, licence, url, sizeBytes, sha256, memoryBytes) or unset ${MODEL_CATALOG_ENV}.`);
}

/** The catalogue in use: the file `ARCHON_MODEL_CATALOG` names, else the built-in one. */
export function modelCatalog(env: NodeJS.ProcessEnv = process.env): readonly CatalogModel[] {
  const file = env[MODEL_CATALOG_ENV];
  if (!file) return MODEL_CATALOG;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw catalogProblem(file, `which cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  const parsed = CatalogModelSchema.array().safeParse(parseJsonOrUndefined(text));
  if (!parsed.success) throw catalogProblem(file, `which is not a model catalogue (${describeZodError(parsed.error)})`);
  return parsed.data;
}
