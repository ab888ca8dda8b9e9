import { z } from 'zod';

/** The environment variable the built-in engine reads its API token from (never argv, which every local user can read). */
export const ENGINE_TOKEN_ENV = 'ARCHON_ENGINE_TOKEN';

/** How the built-in engine is started: which model, with how many threads and parallel sequences. */
export const EngineArgsSchema = z.object({
  modelPath: z.string().min(1),
  threads: z.int().min(1).max(512),
  slots: z.int().min(1).max(16),
  /** `auto`: a GPU when the machine has one the prebuilt binaries support; `off`: the CPU only. */
  gpu: z.enum(['auto', 'off']),
});
export type EngineArgs = z.infer<typeof EngineArgsSchema>;

const FLAGS = { modelPath: '--model', threads: '--threads', slots: '--slots', gpu: '--gpu' } as const;

/** The engine's command-line arguments. */
export function engineArgv(args: EngineArgs): string[] {
  return [FLAGS.modelPath, args.modelPath, FLAGS.threads, String(args.threads), FLAGS.slots, String(args.slots), FLAGS.gpu, args.gpu];
}

/** The arguments `engineArgv` wrote, checked. */
export function parseEngineArgv(argv: readonly string[]): EngineArgs {
  const value = (flag: string) => {
    const index = argv.indexOf(flag);
    return index >= 0 ? argv[index + 1] : undefined;
  };
  const threads = value(FLAGS.threads);
  const slots = value(FLAGS.slots);
  return EngineArgsSchema.parse({ modelPath: value(FLAGS.modelPath), threads: threads && Number(threads), slots: slots && Number(slots), gpu: value(FLAGS.gpu) ?? 'auto' });
}

/** Why the engine could not serve its model: no file, one llama.cpp cannot load, or arguments it was not started with by Archon. */
export const EngineProblemSchema = z.enum(['missing', 'load_failed', 'bad_arguments']);
export type EngineProblem = z.infer<typeof EngineProblemSchema>;

/** Messages from the engine process to the host that started it. */
export const FromEngineSchema = z.discriminatedUnion('type', [
  /** Serving on 127.0.0.1:port: the model's id on /v1/models, its context per sequence and its parallel sequences. */
  z.object({ type: z.literal('ready'), port: z.int().min(1).max(65535), model: z.string(), contextLength: z.int().positive(), slots: z.int().positive(), gpu: z.string() }),
  z.object({ type: z.literal('failed'), problem: EngineProblemSchema, message: z.string() }),
]);
export type FromEngine = z.infer<typeof FromEngineSchema>;

/** What the engine counts of its generations (`GET /archon/stats`): how each ended and the tokens of the last. */
export const EngineStatsSchema = z.object({
  completed: z.int().nonnegative(),
  aborted: z.int().nonnegative(),
  failed: z.int().nonnegative(),
  last: z
    .object({
      outcome: z.enum(['completed', 'aborted', 'failed']),
      promptTokens: z.int().nonnegative(),
      completionTokens: z.int().nonnegative(),
      maxTokens: z.int().positive(),
    })
    .nullable(),
});
export type EngineStats = z.infer<typeof EngineStatsSchema>;
