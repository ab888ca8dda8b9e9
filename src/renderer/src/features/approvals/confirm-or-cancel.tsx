/** A sub-form's two buttons: confirm (disabled while its input is invalid) and cancel. */
export function ConfirmOrCancel({ label, disabled = false, danger = false, onConfirm, onCancel }: { label: string; disabled?: boolean; danger?: boolean; onConfirm(): void; onCancel(): void }) {
  return (
    <div className="actions">
      <button type="button" className={danger ? 'danger' : undefined} disabled={disabled} onClick={onConfirm}>
        {label}
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}
