import { z } from 'zod';

/** A model's short name in the library (`qwen2.5-1.5b`): also its file name there, so no path separators. */
export const ModelNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'a model name is 1 to 64 lower-case letters, digits, dots, dashes or underscores, starting with a letter or digit')
  .refine((name) => !name.endsWith('.gguf') && !name.includes('..'), 'a model name has no ".gguf" ending and no ".."');
export type ModelName = z.infer<typeof ModelNameSchema>;

export const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 is 64 lower-case hex digits');

/** One model of the curated catalogue: where it is published and what it takes. */
export const CatalogModelSchema = z.object({
  name: ModelNameSchema,
  title: z.string().min(1),
  licence: z.string().min(1),
  /** http too, for a mirror of the operator's own: the SHA-256 is what vouches for the file. */
  url: z.url({ protocol: /^https?$/ }),
  sizeBytes: z.number().int().positive(),
  sha256: Sha256Schema,
  /** Memory the model needs to run with a working context (weights, KV cache, runtime). */
  memoryBytes: z.number().int().positive(),
});
export type CatalogModel = z.infer<typeof CatalogModelSchema>;

/** Where a library model comes from: the catalogue, a pull from a URL of its own, or a local file the operator added. */
export const ModelSourceSchema = z.enum(['catalog', 'url', 'local']);

/** One row of `archon models list` and of the app's model library. */
export const LibraryModelSchema = z.object({
  name: ModelNameSchema,
  title: z.string(),
  source: ModelSourceSchema,
  installed: z.boolean(),
  /** The .gguf file when installed (or, for a local model, where it was added from). */
  path: z.string().nullable(),
  sizeBytes: z.number().int().nonnegative().nullable(),
  licence: z.string().nullable(),
  memoryBytes: z.number().int().positive().nullable(),
  /** Bytes of an interrupted download that a pull resumes from. */
  partialBytes: z.number().int().nonnegative(),
});
export type LibraryModel = z.infer<typeof LibraryModelSchema>;

export const DownloadProgressSchema = z.object({
  doneBytes: z.number().int().nonnegative(),
  /** Null while the server has not said. */
  totalBytes: z.number().int().nonnegative().nullable(),
});
export type DownloadProgress = z.infer<typeof DownloadProgressSchema>;
