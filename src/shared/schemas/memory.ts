import { z } from 'zod';
import { RunIdSchema } from './run';

/** What a long-term memory item is: a fact a step found, a run's episode, a Dreamer's lesson, or the operator's preference. */
export const MemoryKindSchema = z.enum(['fact', 'episode', 'lesson', 'preference']);
export type MemoryKind = z.infer<typeof MemoryKindSchema>;

export const MemoryIdSchema = z.string().min(1).max(64);

/** Where a memory came from: the run and, for a step's fact, the step. */
export const MemorySourceSchema = z.object({ runId: RunIdSchema, stepId: z.string().nullable() });
export type MemorySource = z.infer<typeof MemorySourceSchema>;

/** One item of long-term memory, as stored in `archon.db` (secrets redacted before it is written). */
export const MemoryItemSchema = z.object({
  id: MemoryIdSchema,
  kind: MemoryKindSchema,
  text: z.string().min(1).max(20_000),
  /** Null for what the operator wrote by hand. */
  source: MemorySourceSchema.nullable(),
  /** A lesson's evidence: the runs whose records support it. */
  evidence: z.array(RunIdSchema).default([]),
  /** A lesson's scope, as the Dreamer wrote it (the kind of goal or step it applies to). */
  appliesTo: z.string().max(500).nullable().default(null),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  pinned: z.boolean(),
  /** The workspace its runs worked in (a run's pinned real path, else its given path); null when unknown or mixed. */
  workspace: z.string().max(4096).nullable().default(null),
  /** Recalled by runs of every workspace, not only its own: the operator's own items are, unless made local. */
  global: z.boolean().default(false),
});
export type MemoryItem = z.infer<typeof MemoryItemSchema>;

/** One recalled item, as `memory.recalled` names it: `score` is the fused rank score (higher is more relevant). */
export const RecalledMemorySchema = z.object({ id: MemoryIdSchema, kind: MemoryKindSchema, score: z.number(), source: MemorySourceSchema.nullable() });
export type RecalledMemory = z.infer<typeof RecalledMemorySchema>;

/** What the Dreamer submits through `submit_lessons` (docs/model-protocol.md). */
export const SubmitLessonsSchema = z.object({
  lessons: z
    .array(
      z.object({
        text: z.string().min(1).max(2000),
        evidence: z.array(RunIdSchema).min(1).max(20),
        applies_to: z.string().max(500),
      }),
    )
    .max(20),
});
export type SubmitLessons = z.infer<typeof SubmitLessonsSchema>;
