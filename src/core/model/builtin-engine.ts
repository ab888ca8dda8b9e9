import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { raceAbort } from '../../shared/abort';
import { ENGINE_TOKEN_ENV, engineArgv, FromEngineSchema, type FromEngine } from '../../shared/engine-protocol';
import { ArchonError } from '../../shared/errors';

/** The engine's process, whichever way the host started it (a utility process in the app, a forked child in the CLI). */
export interface EngineProcess {
  readonly pid: number | undefined;
  onMessage(listener: (raw: unknown) => void): () => void;
  onExit(listener: (code: number | null) => void): () => void;
  /** SIGTERM unless told otherwise. */
  kill(signal?: NodeJS.Signals): void;
}

/** Starts `out/node/engine.js` with these arguments and these variables added to the host's environment. */
export type EngineLauncher = (args: string[], env: Record<string, string>) => EngineProcess;

/** A running engine as a model server: where it listens, the key it asks for, and what it reported. */
export interface RunningEngine {
  baseUrl: string;
  apiKey: string;
  /** The model's id on /v1/models: the absolute path of its file. */
  model: string;
  contextLength: number;
  slots: number;
}

export interface BuiltinEnginesOptions {
  launch: EngineLauncher;
  /** A library model's name or a file's path as the absolute path of a GGUF file, or a typed error saying what to do. */
  resolveModel(nameOrPath: string): string;
  /** Told each engine's token, so nothing written or announced holds it (the store's redactor). */
  redact?(secret: string): void;
  readyTimeoutMs?: number;
  cores?: number;
}

/** Loading maps the file and builds the context; a model that has not loaded by then will not. */
export const ENGINE_READY_TIMEOUT_MS = 180_000;

/**
 * Sequences and threads for this machine. On four cores or fewer one sequence with one thread: a
 * second thread on a busy small machine slows generation by an order of magnitude. Larger
 * machines run a few sequences and leave two cores to Archon and its tools.
 */
export function engineSizing(cores: number): { slots: number; threads: number } {
  if (cores <= 4) return { slots: 1, threads: 1 };
  return { slots: Math.min(4, Math.floor(cores / 4)), threads: cores - 2 };
}

const NEEDS_A_MODEL = 'Choose one: a model in Models (`archon models list`; Download there or `archon models pull NAME` gets one), or the path of a .gguf file (in the app, Add a .gguf file; on the command line, --model PATH.gguf).';

function loadFailed(path: string, reason: string): ArchonError {
  return new ArchonError('CONFIG_INVALID', `The built-in engine could not load ${path} (${reason.replace(/[.\s]+$/, '')}). Download the model again (Models, or \`archon models pull NAME\`), or choose another.`);
}

/** Resolves once the engine says it is serving; rejects with what to do when it fails, exits or takes too long (and is then ended). */
function readyOf(child: EngineProcess, path: string, timeoutMs: number): Promise<FromEngine & { type: 'ready' }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new ArchonError('MODEL_UNAVAILABLE', `The built-in engine did not load ${path} within ${timeoutMs / 1000} s. Try again, or run a smaller model (\`archon models list\`).`)), timeoutMs);
    const unsubscribe = [
      child.onMessage((raw) => {
        const message = FromEngineSchema.safeParse(raw);
        if (!message.success) return;
        if (message.data.type === 'ready') done(() => resolve(message.data as FromEngine & { type: 'ready' }));
        else fail(loadFailed(path, message.data.message));
      }),
      child.onExit((code) => fail(loadFailed(path, `its process exited with code ${code ?? 'none'} while loading it`))),
    ];
    function done(settle: () => void) {
      clearTimeout(timer);
      for (const off of unsubscribe) off();
      settle();
    }
    function fail(error: ArchonError) {
      done(() => reject(error));
      child.kill();
    }
  });
}

/** How long close waits for an engine to exit after asking it to; the engine's own grace is shorter. */
const ENGINE_EXIT_WAIT_MS = 5000;

/** Asks the engine to end and resolves when its process has exited, or after `ms` (it is then killed outright). */
function ended(child: EngineProcess, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      off();
      child.kill('SIGKILL');
      resolve();
    }, ms);
    const off = child.onExit(() => {
      clearTimeout(timer);
      off();
      resolve();
    });
    child.kill();
  });
}

interface StartedEngine {
  child: EngineProcess;
  ready: Promise<RunningEngine>;
}

/**
 * The built-in engine, one process per model file: started on the first run that asks for it,
 * shared by the runs after it, started again when it died, stopped when the host closes.
 */
export class BuiltinEngines {
  private readonly engines = new Map<string, StartedEngine>();

  constructor(private readonly options: BuiltinEnginesOptions) {}

  /** The engine serving `nameOrPath`, started if need be; the wait ends with the signal (the start goes on for the next run). */
  async ensure(nameOrPath: string, signal: AbortSignal): Promise<RunningEngine> {
    if (!nameOrPath.trim()) throw new ArchonError('CONFIG_INVALID', `The built-in engine runs a model you choose. ${NEEDS_A_MODEL}`);
    const path = this.options.resolveModel(nameOrPath);
    const running = this.engines.get(path) ?? this.start(path);
    return raceAbort(running.ready, signal);
  }

  private start(path: string): StartedEngine {
    const token = randomBytes(32).toString('base64url');
    this.options.redact?.(token);
    const sizing = engineSizing(this.options.cores ?? availableParallelism());
    const child = this.options.launch(engineArgv({ modelPath: path, ...sizing, gpu: 'auto' }), { [ENGINE_TOKEN_ENV]: token });
    const entry: StartedEngine = {
      child,
      ready: readyOf(child, path, this.options.readyTimeoutMs ?? ENGINE_READY_TIMEOUT_MS).then((ready) => ({
        baseUrl: `http://127.0.0.1:${ready.port}/v1`,
        apiKey: token,
        model: ready.model,
        contextLength: ready.contextLength,
        slots: ready.slots,
      })),
    };
    // A failed start is not kept, nor an engine that died: the next run starts it again.
    entry.ready.catch(() => this.forget(path, entry));
    child.onExit(() => this.forget(path, entry));
    this.engines.set(path, entry);
    return entry;
  }

  private forget(path: string, entry: StartedEngine): void {
    if (this.engines.get(path) === entry) this.engines.delete(path);
  }

  /** Ends every engine and waits (bounded) for each process to go: it counts the generations it aborts first. */
  async close(): Promise<void> {
    const children = [...this.engines.values()].map(({ child }) => child);
    this.engines.clear();
    await Promise.all(children.map((child) => ended(child, ENGINE_EXIT_WAIT_MS)));
  }
}
