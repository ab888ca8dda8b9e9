import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama, JinjaTemplateChatWrapper, LlamaChatSession, type Llama, type LlamaModel } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTinyModel, type TinyModelOptions } from './tiny-gguf';

const QWEN_TEMPLATE = readFileSync(new URL('../fixtures/chat-templates/qwen2.5-instruct.jinja', import.meta.url), 'utf8');

let dir: string;
let llama: Llama;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'archon-tiny-gguf-'));
  llama = await getLlama({ gpu: false, build: 'never' });
});
afterAll(async () => {
  await llama?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

async function withModel<T>(options: TinyModelOptions, use: (model: LlamaModel) => Promise<T>): Promise<T> {
  const path = join(dir, `model-${options.seed ?? 1}${options.endless ? '-endless' : ''}.gguf`);
  const model = await llama.loadModel({ modelPath: writeTinyModel(path, options) });
  try {
    return await use(model);
  } finally {
    await model.dispose();
  }
}

/** One chat turn on one thread: how many tokens came and why generation stopped. */
async function chat(model: LlamaModel, maxTokens: number) {
  const context = await model.createContext({ threads: 1, contextSize: 1024 });
  try {
    const session = new LlamaChatSession({ contextSequence: context.getSequence() });
    let tokens = 0;
    const { stopReason } = await session.promptWithMeta('Say hello', { maxTokens, onToken: (chunk) => (tokens += chunk.length) });
    return { tokens, stopReason, chatWrapper: session.chatWrapper };
  } finally {
    await context.dispose();
  }
}

describe('tiny GGUF model', () => {
  it('writes the same bytes for the same seed, other bytes for another, a few hundred KB', () => {
    const [first, again, other] = [1, 1, 2].map((seed, index) => readFileSync(writeTinyModel(join(dir, `seed-${index}.gguf`), { seed })));
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
    expect(first?.subarray(0, 4).toString('latin1')).toBe('GGUF');
    expect(statSync(join(dir, 'seed-0.gguf')).size).toBeGreaterThan(100_000);
    expect(statSync(join(dir, 'seed-0.gguf')).size).toBeLessThan(1_000_000);
  });

  it('loads in node-llama-cpp with its chat template and special tokens read from the file', async () => {
    await withModel({}, async (model) => {
      expect(model.fileInfo.metadata.general.architecture).toBe('llama');
      expect(model.fileInfo.metadata.tokenizer.chat_template).toBe(QWEN_TEMPLATE);
      expect(model.tokens.eosString).toBe('<|im_end|>');
      expect(model.tokens.bosString).toBe('<|endoftext|>');
      expect(model.tokenize('<tool_call>', true)).toHaveLength(1);
      const { chatWrapper } = await chat(model, 1);
      expect(chatWrapper).toBeInstanceOf(JinjaTemplateChatWrapper);
    });
  });

  it('round-trips ASCII text through its byte-level BPE tokenizer', async () => {
    await withModel({}, async (model) => {
      const text = 'Hello world, the file {"name": "read_file", "arguments": [1, 2]}\n\tdone';
      const tokens = model.tokenize(text);
      expect(tokens.length).toBeLessThan(text.length);
      expect(model.detokenize(tokens)).toBe(text);
    });
  });

  it('generates tokens and stops by itself or at the limit', async () => {
    await withModel({ seed: 1 }, async (model) => {
      const { tokens, stopReason } = await chat(model, 64);
      expect(tokens).toBeGreaterThan(0);
      expect(tokens).toBeLessThanOrEqual(64);
      expect(['eogToken', 'maxTokens']).toContain(stopReason);
    });
  });

  it('when endless, generates up to the token limit without stopping early', async () => {
    await withModel({ seed: 1, endless: true }, async (model) => {
      const { tokens, stopReason } = await chat(model, 200);
      expect(stopReason).toBe('maxTokens');
      expect(tokens).toBe(200);
    });
  });
});
