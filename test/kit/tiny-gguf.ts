import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * A tiny llama-architecture model in GGUF v3, written byte by byte, that node-llama-cpp and
 * llama.cpp's `llama-server` both load and serve: two layers, random weights, its own byte-level BPE
 * vocabulary of printable ASCII and Qwen2.5's chat template, so that tests run a real engine on real
 * protocol (tokens, the template, tool calls, stops) without a downloaded model. It says nothing
 * sensible; tests assert protocol facts, never words.
 *
 * The chat template, test/fixtures/chat-templates/qwen2.5-instruct.jinja, is a verbatim copy of
 * models/templates/Qwen-Qwen2.5-7B-Instruct.jinja of github.com/ggml-org/llama.cpp at commit
 * 80fb11ac73e66d89eae2c6a91d8a77428fa733ed, the llama.cpp source node-llama-cpp 3.21.1 ships.
 */

export interface TinyModelOptions {
  /** Seeds the weights: the same seed writes the same bytes. Default 1. */
  seed?: number;
  /** When true, the model is not biased toward ending: it generates until the token limit (for abort tests). */
  endless?: boolean;
  /** The context it was "trained" for, which engines take as its maximum. Default 32,768. */
  contextLength?: number;
}

const CHAT_TEMPLATE_URL = new URL('../fixtures/chat-templates/qwen2.5-instruct.jinja', import.meta.url);

const EMBEDDING = 64;
const HEADS = 4;
const KV_HEADS = 2;
const HEAD_SIZE = EMBEDDING / HEADS;
const FEED_FORWARD = 128;
const LAYERS = 2;
const CONTEXT = 32_768;

/**
 * The residual stream's first dimensions carry designed signals instead of noise (`Signals`): no
 * layer reads or writes them, so at the output they still hold the current token's values, and
 * the output rows of a few tokens read them as a bias that depends on the token before.
 */
const FIRST_FREE = 6;

/** A signal's strength in the embedding; after the final norm it reads about 3. */
const ON = 4;
/** A weight on the constant signal that puts a logit out of any sampler's reach. */
const NEVER = -10;

// Token types (gguf-py's TokenType).
const NORMAL = 1;
const CONTROL = 3;
const USER_DEFINED = 4;

const ENDOFTEXT = '<|endoftext|>';
const IM_START = '<|im_start|>';
const IM_END = '<|im_end|>';
const TOOL_CALL = '<tool_call>';
const TOOL_CALL_END = '</tool_call>';

/** Qwen2.5 marks its chat delimiters control tokens and its tool-call tags user-defined ones. */
const SPECIALS: readonly (readonly [string, number])[] = [
  [ENDOFTEXT, CONTROL],
  [IM_START, CONTROL],
  [IM_END, CONTROL],
  [TOOL_CALL, USER_DEFINED],
  [TOOL_CALL_END, USER_DEFINED],
];

/** Merged into tokens letter by letter, so common text takes fewer tokens than characters. */
const WORDS = [
  ' the', ' a', ' and', ' to', ' of', ' in', ' is', ' it', ' you', ' that', ' for', ' with', ' on', ' are',
  ' this', ' be', ' can', ' not', ' file', ' name', ' run', ' read', ' write', ' call', ' tool', ' done',
  ' ok', ' hello', ' world', ' yes', ' no', ' step', ' plan', ' task', ' value', ' path', ' text',
  'the', 'ing', 'ed', 'er', 'es', 'tion', 'Hello', 'name', 'arguments', 'value', 'path', 'text', 'true',
  'false', 'null', '{"', '":', '",', '"}', ' "', ' {', '}}', ' [', '],',
];

type Random = () => number;

/** mulberry32: a small seeded generator, so the same seed writes the same bytes. */
function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Uniform noise with the given standard deviation. */
function noise(random: Random, deviation: number): number {
  return (random() * 2 - 1) * deviation * Math.sqrt(3);
}

// --- vocabulary -------------------------------------------------------------------------------

/** GPT-2's byte-level spelling: printable ASCII is itself, space, tab and newline shift past 255. */
function byteLevel(text: string): string {
  return text.replace(/[ \t\n]/g, (char) => String.fromCharCode(256 + char.charCodeAt(0)));
}

interface Vocabulary {
  tokens: string[];
  types: number[];
  merges: string[];
  id: (token: string) => number;
}

/** Printable ASCII, tab and newline, each valid UTF-8 on its own, so any output decodes. */
function baseTokens(): string[] {
  const chars = ['\t', '\n'];
  for (let code = 0x20; code <= 0x7e; code++) chars.push(String.fromCharCode(code));
  return chars.map(byteLevel);
}

/** Each word built left to right: every prefix a token, every merge joining a prefix and a char. */
function wordMerges(): { merges: string[]; merged: string[] } {
  const merges = new Set<string>();
  const merged = new Set<string>();
  for (const word of WORDS) {
    const chars = [...byteLevel(word)];
    for (let length = 2; length <= chars.length; length++) {
      const prefix = chars.slice(0, length - 1).join('');
      merges.add(`${prefix} ${chars[length - 1]}`);
      merged.add(prefix + chars[length - 1]);
    }
  }
  return { merges: [...merges], merged: [...merged] };
}

function buildVocabulary(): Vocabulary {
  const { merges, merged } = wordMerges();
  const normal = [...baseTokens(), ...merged];
  const tokens = [...normal, ...SPECIALS.map(([text]) => text)];
  const types = [...normal.map(() => NORMAL), ...SPECIALS.map(([, type]) => type)];
  const ids = new Map(tokens.map((token, index) => [token, index]));
  const id = (token: string): number => {
    const found = ids.get(token);
    if (found === undefined) throw new Error(`no token ${token}`);
    return found;
  };
  return { tokens, types, merges, id };
}

// --- weights ----------------------------------------------------------------------------------

interface Tensor {
  name: string;
  /** ggml order: the first dimension varies fastest. */
  dims: readonly number[];
  data: Float32Array;
}

/** A [columns, rows] matrix (ggml order) of noise; its first `silent` rows stay zero. */
function matrix(random: Random, columns: number, rows: number, deviation: number, silent = 0): Float32Array {
  const data = new Float32Array(columns * rows);
  for (let row = silent; row < rows; row++) {
    for (let column = 0; column < columns; column++) data[row * columns + column] = noise(random, deviation);
  }
  return data;
}

/** An RMS-norm weight that hides the signal dimensions from the layer it feeds. */
function freeNorm(): Float32Array {
  return new Float32Array(EMBEDDING).fill(1).fill(0, 0, FIRST_FREE);
}

function layerTensors(random: Random, layer: number): Tensor[] {
  const kv = KV_HEADS * HEAD_SIZE;
  const unit = 1 / Math.sqrt(EMBEDDING - FIRST_FREE);
  const tensor = (name: string, dims: readonly number[], data: Float32Array): Tensor => ({ name: `blk.${layer}.${name}`, dims, data });
  return [
    tensor('attn_norm.weight', [EMBEDDING], freeNorm()),
    tensor('attn_q.weight', [EMBEDDING, EMBEDDING], matrix(random, EMBEDDING, EMBEDDING, unit)),
    tensor('attn_k.weight', [EMBEDDING, kv], matrix(random, EMBEDDING, kv, unit)),
    tensor('attn_v.weight', [EMBEDDING, kv], matrix(random, EMBEDDING, kv, unit)),
    tensor('attn_output.weight', [EMBEDDING, EMBEDDING], matrix(random, EMBEDDING, EMBEDDING, 0.5 / Math.sqrt(EMBEDDING), FIRST_FREE)),
    tensor('ffn_norm.weight', [EMBEDDING], freeNorm()),
    tensor('ffn_gate.weight', [EMBEDDING, FEED_FORWARD], matrix(random, EMBEDDING, FEED_FORWARD, unit)),
    tensor('ffn_up.weight', [EMBEDDING, FEED_FORWARD], matrix(random, EMBEDDING, FEED_FORWARD, unit)),
    tensor('ffn_down.weight', [FEED_FORWARD, EMBEDDING], matrix(random, FEED_FORWARD, EMBEDDING, 0.5 / Math.sqrt(FEED_FORWARD), FIRST_FREE)),
  ];
}

/**
 * A token's values in the signal dimensions: a constant; whether it invites the end (negative:
 * forbids it), a tool call, a newline (as `<tool_call>` does in the Qwen/Hermes format); whether
 * it is whitespace (a grammar allows runs of it, so more becomes unlikely); whether it closes a
 * JSON object (a tool call may end there).
 */
type Signals = readonly [constant: number, end: number, call: number, newline: number, whitespace: number, close: number];

const NEWLINE = byteLevel('\n');
const WHITESPACES = new Set([' ', '\t', '\n'].map(byteLevel));
const SENTENCE_ENDS = new Set(['.', '!', '?']);
/** The end of a tool call, as a token or spelled out under a grammar. */
const CALL_ENDS = new Set([TOOL_CALL_END, '>']);

/**
 * Tokens the seed picks and sentence ends invite the end, a closed tool call all the more, a
 * newline forbids it (an answer is never empty); other tokens the seed picks invite a tool call
 * (not a newline: with `<tool_call>` asking for one, the two would take turns forever).
 */
function tokenSignals(random: Random, token: string): Signals {
  const [endDraw, callDraw] = [random(), random()];
  const end = token === NEWLINE ? -2 * ON : CALL_ENDS.has(token) ? 2 * ON : SENTENCE_ENDS.has(token) || endDraw < 0.1 ? ON : 0;
  const call = callDraw < 0.1 ? ON : 0;
  return [ON, end, call, token === TOOL_CALL ? ON : 0, WHITESPACES.has(token) ? ON : 0, token.endsWith('}') ? ON : 0];
}

function embeddings(random: Random, vocabulary: Vocabulary): Float32Array {
  const data = matrix(random, EMBEDDING, vocabulary.tokens.length, 1);
  vocabulary.tokens.forEach((token, id) => data.set(tokenSignals(random, token), id * EMBEDDING));
  return data;
}

interface OutputRow {
  /** Weights on the signals: about 3 times each is added to the token's logit. */
  signals: Signals;
  /** Whether the row keeps its noise, the context's say in the logit. */
  noise: boolean;
}

/**
 * The rows that read the signals; others are noise alone. Only `<|im_end|>` ends an answer; an
 * endless model never ends, never calls on its own and never closes a string. `<|endoftext|>` and `<|im_start|>` never
 * come; `"` comes a little more, so that strings under a grammar close, and `</tool_call>` after
 * a closed object, so that a call ends there.
 */
function outputRow(token: string, endless: boolean): OutputRow | undefined {
  const never: OutputRow = { signals: [NEVER, 0, 0, 0, 0, 0], noise: false };
  // Nor does it close a string when it has a choice: under a JSON grammar it writes one string until the token limit.
  if (endless && token.includes('"')) return never;
  if (token === IM_END) return endless ? never : { signals: [0.3, 2, 0, 0, 0, 0], noise: false };
  if (token === TOOL_CALL) return endless ? never : { signals: [0, 0, 2.5, 0, 0, 0], noise: false };
  if (token === TOOL_CALL_END) return { signals: [0, 0, 0, 0, 0, 3], noise: true };
  if (token === ENDOFTEXT || token === IM_START) return never;
  if (token === NEWLINE) return { signals: [0, 0, 0, 5, -3, 0], noise: true };
  if (WHITESPACES.has(token)) return { signals: [0, 0, 0, 0, -3, 0], noise: true };
  if (token === '"') return { signals: [0.4, 0, 0, 0, 0, 0], noise: true };
  return undefined;
}

/** A separate output layer: a tied one makes the model repeat its last token. */
function outputWeights(random: Random, vocabulary: Vocabulary, endless: boolean): Float32Array {
  const data = matrix(random, EMBEDDING, vocabulary.tokens.length, 0.3);
  vocabulary.tokens.forEach((token, id) => {
    const row = id * EMBEDDING;
    const designed = outputRow(token, endless);
    if (designed && !designed.noise) data.fill(0, row, row + EMBEDDING);
    data.set(designed?.signals ?? [0, 0, 0, 0, 0, 0], row);
  });
  return data;
}

function modelTensors(vocabulary: Vocabulary, options: TinyModelOptions): Tensor[] {
  const random = seededRandom(options.seed ?? 1);
  const vocab = vocabulary.tokens.length;
  const layers = Array.from({ length: LAYERS }, (_, layer) => layerTensors(random, layer)).flat();
  return [
    { name: 'token_embd.weight', dims: [EMBEDDING, vocab], data: embeddings(random, vocabulary) },
    ...layers,
    { name: 'output_norm.weight', dims: [EMBEDDING], data: new Float32Array(EMBEDDING).fill(1) },
    { name: 'output.weight', dims: [EMBEDDING, vocab], data: outputWeights(random, vocabulary, options.endless ?? false) },
  ];
}

// --- GGUF -------------------------------------------------------------------------------------

const ALIGNMENT = 32;
const GGUF_VERSION = 3;
const GGML_TYPE_F32 = 0;

// Value types (gguf-py's GGUFValueType).
const UINT32 = 4;
const INT32 = 5;
const FLOAT32 = 6;
const BOOL = 7;
const STRING = 8;
const ARRAY = 9;

/** A little-endian byte sink. */
class Bytes {
  private readonly chunks: Buffer[] = [];
  private length = 0;

  private push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  u8(value: number): void {
    this.push(Buffer.from([value]));
  }

  u32(value: number): void {
    const chunk = Buffer.alloc(4);
    chunk.writeUInt32LE(value);
    this.push(chunk);
  }

  i32(value: number): void {
    const chunk = Buffer.alloc(4);
    chunk.writeInt32LE(value);
    this.push(chunk);
  }

  u64(value: number): void {
    const chunk = Buffer.alloc(8);
    chunk.writeBigUInt64LE(BigInt(value));
    this.push(chunk);
  }

  f32(value: number): void {
    const chunk = Buffer.alloc(4);
    chunk.writeFloatLE(value);
    this.push(chunk);
  }

  string(value: string): void {
    const bytes = Buffer.from(value, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }

  floats(values: Float32Array): void {
    const chunk = Buffer.alloc(values.length * 4);
    values.forEach((value, index) => chunk.writeFloatLE(value, index * 4));
    this.push(chunk);
  }

  /** Zeros up to the next alignment boundary of the file. */
  pad(): void {
    this.push(Buffer.alloc(padding(this.length)));
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

function padding(length: number): number {
  return (ALIGNMENT - (length % ALIGNMENT)) % ALIGNMENT;
}

interface Value {
  type: number;
  write: (out: Bytes) => void;
}

const u32 = (value: number): Value => ({ type: UINT32, write: (out) => out.u32(value) });
const f32 = (value: number): Value => ({ type: FLOAT32, write: (out) => out.f32(value) });
const bool = (value: boolean): Value => ({ type: BOOL, write: (out) => out.u8(value ? 1 : 0) });
const string = (value: string): Value => ({ type: STRING, write: (out) => out.string(value) });
const array = (type: number, values: readonly Value[]): Value => ({
  type: ARRAY,
  write: (out) => {
    out.u32(type);
    out.u64(values.length);
    for (const value of values) value.write(out);
  },
});
const strings = (values: readonly string[]): Value => array(STRING, values.map(string));
const int32s = (values: readonly number[]): Value => array(INT32, values.map((value) => ({ type: INT32, write: (out) => out.i32(value) })));

function metadata(vocabulary: Vocabulary, contextLength: number): [string, Value][] {
  return [
    ['general.architecture', string('llama')],
    ['general.name', string('archon-tiny')],
    ['llama.context_length', u32(contextLength)],
    ['llama.embedding_length', u32(EMBEDDING)],
    ['llama.block_count', u32(LAYERS)],
    ['llama.feed_forward_length', u32(FEED_FORWARD)],
    ['llama.attention.head_count', u32(HEADS)],
    ['llama.attention.head_count_kv', u32(KV_HEADS)],
    ['llama.attention.layer_norm_rms_epsilon', f32(1e-5)],
    ['llama.rope.dimension_count', u32(HEAD_SIZE)],
    ['llama.rope.freq_base', f32(10000)],
    ['llama.vocab_size', u32(vocabulary.tokens.length)],
    ['tokenizer.ggml.model', string('gpt2')],
    ['tokenizer.ggml.pre', string('qwen2')],
    ['tokenizer.ggml.tokens', strings(vocabulary.tokens)],
    ['tokenizer.ggml.token_type', int32s(vocabulary.types)],
    ['tokenizer.ggml.merges', strings(vocabulary.merges)],
    ['tokenizer.ggml.bos_token_id', u32(vocabulary.id(ENDOFTEXT))],
    ['tokenizer.ggml.eos_token_id', u32(vocabulary.id(IM_END))],
    ['tokenizer.ggml.padding_token_id', u32(vocabulary.id(ENDOFTEXT))],
    ['tokenizer.ggml.add_bos_token', bool(false)],
    ['tokenizer.chat_template', string(readFileSync(CHAT_TEMPLATE_URL, 'utf8'))],
  ];
}

/** Header, metadata, tensor infos, then each tensor's data aligned (the GGUF v3 layout). */
function gguf(entries: readonly [string, Value][], tensors: readonly Tensor[]): Buffer {
  const out = new Bytes();
  out.u32(0x46554747); // "GGUF"
  out.u32(GGUF_VERSION);
  out.u64(tensors.length);
  out.u64(entries.length);
  for (const [key, value] of entries) {
    out.string(key);
    out.u32(value.type);
    value.write(out);
  }
  let offset = 0;
  for (const tensor of tensors) {
    out.string(tensor.name);
    out.u32(tensor.dims.length);
    for (const dim of tensor.dims) out.u64(dim);
    out.u32(GGML_TYPE_F32);
    out.u64(offset);
    offset += tensor.data.byteLength + padding(tensor.data.byteLength);
  }
  out.pad();
  for (const tensor of tensors) {
    out.floats(tensor.data);
    out.pad();
  }
  return out.toBuffer();
}

/** Writes a tiny llama-architecture GGUF model (a few hundred KB) to `path`; returns `path`. */
export function writeTinyModel(path: string, options: TinyModelOptions = {}): string {
  const vocabulary = buildVocabulary();
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, gguf(metadata(vocabulary, options.contextLength ?? CONTEXT), modelTensors(vocabulary, options)));
  return path;
}
