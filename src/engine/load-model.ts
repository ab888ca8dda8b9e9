import { existsSync } from 'node:fs';
import { getLlama, LlamaChat, LlamaLogLevel, resolveChatWrapper, type ChatWrapper, type Llama, type LlamaContext, type LlamaModel } from 'node-llama-cpp';
import type { EngineArgs, EngineProblem } from '../shared/engine-protocol';
import { withCallTrigger } from './call-trigger';

/** A context beyond this is rarely worth its memory and prefill time on the machines the engine is for. */
const MAX_CONTEXT = 32_768;

/** A model that could not be served, and why. */
export class EngineLoadError extends Error {
  constructor(
    readonly problem: EngineProblem,
    message: string,
  ) {
    super(message);
  }
}

/** The model loaded once, its context split into `slots` sequences, each with its own chat. */
export interface LoadedModel {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  chatWrapper: ChatWrapper;
  chats: LlamaChat[];
  gpu: string;
}

async function loadLlama(args: EngineArgs): Promise<Llama> {
  const options = { build: 'never', maxThreads: args.threads, logLevel: LlamaLogLevel.error, progressLogs: false } as const;
  if (args.gpu === 'off') return getLlama({ ...options, gpu: false });
  // A GPU binary that will not load here (no driver) leaves the CPU one.
  return getLlama({ ...options, gpu: 'auto' }).catch(() => getLlama({ ...options, gpu: false }));
}

export async function loadModel(args: EngineArgs): Promise<LoadedModel> {
  if (!existsSync(args.modelPath)) throw new EngineLoadError('missing', 'the file does not exist');
  try {
    const llama = await loadLlama(args);
    const model = await llama.loadModel({ modelPath: args.modelPath });
    // Sized to the memory there is (node-llama-cpp's auto sizing), within the model's own context and MAX_CONTEXT.
    const context = await model.createContext({ sequences: args.slots, threads: args.threads, contextSize: { max: MAX_CONTEXT } });
    const chatWrapper = withCallTrigger(resolveChatWrapper(model), model);
    const chats = Array.from({ length: args.slots }, () => new LlamaChat({ contextSequence: context.getSequence(), chatWrapper }));
    return { llama, model, context, chatWrapper, chats, gpu: llama.gpu === false ? 'cpu' : llama.gpu };
  } catch (error) {
    throw new EngineLoadError('load_failed', `llama.cpp: ${error instanceof Error ? error.message : String(error)}`);
  }
}
