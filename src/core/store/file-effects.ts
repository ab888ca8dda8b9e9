import { z } from 'zod';
import type { FileEffect } from '../../shared/schemas/file-effect';
import type { SecretRedactor } from '../secrets/redactor';
import type { SqliteDatabase } from './open-database';

/** One write of a run, as undo needs it: `previous` is null when the file did not exist, was too large to keep, or held a known secret (`withheld` says so). */
export interface StoredFileEffect {
  seq: number;
  callId: string;
  path: string;
  existed: boolean;
  previous: Buffer | null;
  /** Why the previous content was not kept though it fit. */
  withheld: string | null;
  newSha256: string;
  /** What the run wrote, as its journal holds it (secrets blanked): for showing the change only. */
  written: string | null;
}

const RowSchema = z.object({
  seq: z.int(),
  call_id: z.string(),
  path: z.string(),
  existed: z.int().transform((value) => value === 1),
  previous: z.instanceof(Buffer).nullable(),
  previous_withheld: z.string().nullable(),
  new_sha256: z.string(),
  args_json: z.string().nullable(),
});

const WITHHELD = 'its previous content held a secret Archon knows (an API key or token), which is never stored, so this write cannot be undone: restore the file yourself';

function writtenContent(argsJson: string | null): string | null {
  const parsed = z.object({ content: z.string() }).safeParse(argsJson === null ? null : JSON.parse(argsJson));
  return parsed.success ? parsed.data.content : null;
}

/** The journal of file effects: what each write replaced, kept so a run can be undone (saga compensation). */
export class FileEffectStore {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly durably: <T>(write: () => T) => T,
    private readonly secrets: SecretRedactor,
  ) {}

  /** A previous content holding a known secret (the run's key in a `.env`) is not kept: undo cannot restore that file, and says why. */
  record(runId: string, callId: string, effect: FileEffect): void {
    const previous = effect.previousBase64 === undefined ? null : Buffer.from(effect.previousBase64, 'base64');
    const withheld = previous !== null && this.secrets.holdsSecret(previous.toString('latin1')) ? WITHHELD : null;
    this.durably(() =>
      this.db
        .prepare('INSERT INTO file_effects (run_id, call_id, path, existed, previous, previous_withheld, previous_sha256, new_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
        .run(runId, callId, effect.path, effect.existed ? 1 : 0, withheld ? null : previous, withheld, effect.previousSha256, effect.newSha256),
    );
  }

  /** The run's writes not yet undone, last first: the order they are undone in. */
  pending(runId: string): StoredFileEffect[] {
    const rows = this.db
      .prepare(
        `SELECT e.seq, e.call_id, e.path, e.existed, e.previous, e.previous_withheld, e.new_sha256, c.args_json FROM file_effects e LEFT JOIN tool_calls c ON c.id = e.call_id
         WHERE e.run_id = ? AND e.undone_at IS NULL ORDER BY e.seq DESC`,
      )
      .all(runId);
    return rows.map((raw) => {
      const row = RowSchema.parse(raw);
      return { seq: row.seq, callId: row.call_id, path: row.path, existed: row.existed, previous: row.previous, withheld: row.previous_withheld, newSha256: row.new_sha256, written: writtenContent(row.args_json) };
    });
  }

  markUndone(seq: number, now: string): void {
    this.durably(() => this.db.prepare('UPDATE file_effects SET undone_at = ? WHERE seq = ?').run(now, seq));
  }
}
