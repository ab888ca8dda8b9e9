import { ENGINE_TOKEN_ENV, parseEngineArgv, type EngineArgs, type FromEngine } from '../shared/engine-protocol';
import { parentChannel } from '../shared/parent-channel';
import { GenerationStats } from './generation-stats';
import { Grammars } from './grammars';
import { startEngineServer } from './http-server';
import { EngineLoadError, loadModel } from './load-model';
import { SequenceSlots } from './sequence-slots';

/**
 * The built-in engine: one GGUF model served by node-llama-cpp as an OpenAI-compatible endpoint on
 * loopback, in a process of its own (a utility process in the app, a forked child in the CLI). It
 * says where it listens over the IPC channel and ends when its host does.
 */

function argsOrNull(): EngineArgs | null {
  try {
    return parseEngineArgv(process.argv.slice(2));
  } catch {
    return null;
  }
}

/** How long generations get to notice their abort when the host ends the engine. */
const STOP_GRACE_MS = 2000;

async function stopWithin(closing: Promise<void>, ms: number): Promise<never> {
  await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, ms).unref())]);
  process.exit(0);
}

async function main(): Promise<void> {
  const parent = parentChannel<FromEngine>();
  parent.onGone(() => process.exit(0));
  const args = argsOrNull();
  const token = process.env[ENGINE_TOKEN_ENV];
  if (!args || !token) {
    await parent.send({ type: 'failed', problem: 'bad_arguments', message: `The engine needs --model PATH --threads N --slots N and ${ENGINE_TOKEN_ENV}; Archon starts it with them.` });
    process.exit(2);
  }
  try {
    const loaded = await loadModel(args);
    const contextLength = loaded.context.contextSize;
    const server = await startEngineServer({ token, modelId: args.modelPath, contextLength, slots: new SequenceSlots(loaded.chats), grammars: new Grammars(loaded.llama), stats: new GenerationStats() });
    // Asked to end (the host closing): generations in progress are aborted and counted before the process goes.
    process.once('SIGTERM', () => void stopWithin(server.close(), STOP_GRACE_MS));
    await parent.send({ type: 'ready', port: server.port, model: args.modelPath, contextLength, slots: loaded.chats.length, gpu: loaded.gpu });
  } catch (error) {
    const problem = error instanceof EngineLoadError ? error.problem : 'load_failed';
    await parent.send({ type: 'failed', problem, message: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  }
}

void main();
