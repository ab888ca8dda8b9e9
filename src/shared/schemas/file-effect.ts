import { z } from 'zod';

/** A write's previous content is kept up to this size; a larger file's write cannot be undone (and says so). */
export const KEPT_PREVIOUS_BYTES = 1024 * 1024;

const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * What a write_file call did to its file, as the tool process reports it: the workspace-relative
 * path, whether the file existed, what it held (base64, when kept) and the hash of what it holds now.
 */
export const FileEffectSchema = z.object({
  path: z.string().min(1),
  existed: z.boolean(),
  previousSha256: Sha256Schema.nullable(),
  previousBase64: z.string().optional(),
  newSha256: Sha256Schema,
});
export type FileEffect = z.infer<typeof FileEffectSchema>;

/** The tool process's own operation (never offered to a model) that puts a file back: content null deletes it. */
export const RESTORE_FILE = 'archon.restore_file';
export const RestoreFileInputSchema = z
  .object({
    path: z.string().min(1).max(4096),
    /** The hash the run left: a file that no longer has it was changed since, and is left as it is. */
    expectedSha256: Sha256Schema,
    contentBase64: z.string().max(2 * KEPT_PREVIOUS_BYTES).nullable(),
  })
  .strict();
export type RestoreFileInput = z.infer<typeof RestoreFileInputSchema>;

/**
 * One write to revert, last first: restore the previous content, delete a file the run created, cannot (not
 * kept), or changed (the file changed since the run left it, so it is left as it is).
 */
export const UndoStepSchema = z.object({
  path: z.string(),
  action: z.enum(['restore', 'delete', 'cannot', 'changed']),
  /** The change undo makes, as a unified diff (from what the run wrote to what was there before); for `cannot` and `changed`, why. */
  diff: z.string(),
});
export type UndoStep = z.infer<typeof UndoStepSchema>;

/** Whether reverting changes the step's file (a restore or a delete), as against leaving it as it is. */
export function revertsFile(step: UndoStep): boolean {
  return step.action === 'restore' || step.action === 'delete';
}

/** What undo did: the files put back, and those left as they are with the reason. */
export const UndoOutcomeSchema = z.object({
  reverted: z.array(z.string()),
  refused: z.array(z.object({ path: z.string(), reason: z.string() })),
});
export type UndoOutcome = z.infer<typeof UndoOutcomeSchema>;
