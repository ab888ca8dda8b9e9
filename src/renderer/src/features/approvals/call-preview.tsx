import { HAZARD_MEANING } from '../../../../shared/command-hazards';
import type { ApprovalPreview, ExplanationPacket } from '../../../../shared/schemas/approval';

/** A unified diff line by line; removed and added lines are marked for the eye and for a screen reader. */
function DiffLines({ path, diff, truncated }: { path: string; diff: string; truncated: boolean }) {
  const lines = diff.split('\n').filter((line, index, all) => line !== '' || index < all.length - 1);
  return (
    <>
      <ol className="diff" aria-label={`Changes to ${path}`}>
        {lines.map((line, index) => {
          const mark = line.startsWith('+') ? 'added' : line.startsWith('-') ? 'removed' : line.startsWith('@@') ? 'hunk' : 'same';
          return (
            <li key={index} className={`diff-${mark}`}>
              {(mark === 'added' || mark === 'removed') && <span className="sr-only">{mark}: </span>}
              {line}
            </li>
          );
        })}
      </ol>
      {truncated && <p>The diff is cut short here; the file changes further.</p>}
    </>
  );
}

/** What undo does to a write: a new file is removed, a changed one gets its previous content back. */
function undoNote(preview: Exclude<ApprovalPreview, { kind: 'command' }>, reversibility: ExplanationPacket['reversibility']): string {
  if (reversibility !== 'reversible') return 'Cannot be undone.';
  return preview.kind === 'new_file' ? 'Can be undone: undo removes the new file.' : 'Can be undone: the previous content is kept.';
}

/** What a call will do, as core worked it out before asking: a file write's changes, or a command's folder and dangerous parts. */
export function CallPreview({ preview, reversibility }: { preview: ApprovalPreview; reversibility: ExplanationPacket['reversibility'] }) {
  if (preview.kind === 'command') {
    return (
      <section className="call-preview" aria-label="What the command does">
        <p>
          Runs in <code>{preview.cwd}</code>
        </p>
        {preview.hazards.length > 0 ? (
          <ul className="hazards" aria-label="Dangerous parts">
            {preview.hazards.map((hazard, index) => (
              <li key={index}>
                <strong>{HAZARD_MEANING[hazard.kind]}</strong>: <code>{hazard.text}</code>
              </li>
            ))}
          </ul>
        ) : (
          <p>No deletions, writes outside the workspace, shells, hidden code, network use or sudo found.</p>
        )}
      </section>
    );
  }
  return (
    <section className="call-preview" aria-label={`What the write does to ${preview.path}`}>
      {preview.kind === 'new_file' && (
        <p>
          Creates a new file <code>{preview.path}</code> ({preview.bytes} bytes).
        </p>
      )}
      {preview.kind === 'replaces' && (
        <p>
          Replaces <code>{preview.path}</code> as a whole: {preview.reason}.
        </p>
      )}
      {preview.kind === 'diff' &&
        (preview.diff === '' ? (
          <p>
            No change: <code>{preview.path}</code> already has this content.
          </p>
        ) : (
          <DiffLines path={preview.path} diff={preview.diff} truncated={preview.truncated} />
        ))}
      <p>{undoNote(preview, reversibility)}</p>
    </section>
  );
}
