export function AuditView() {
  return (
    <section aria-labelledby="audit-heading" className="view">
      <h1 id="audit-heading">Audit</h1>
      <p className="empty">No audit reports yet. The auditor reports on runs once they have run.</p>
    </section>
  );
}
