import { useEffect, useId, useState } from 'react';
import { inAppTerms } from '../../../../shared/app-advice';
import { renderAuditMarkdown } from '../../../../shared/audit-markdown';
import type { AuditReport, Finding } from '../../../../shared/schemas/audit';
import { useAppStore } from '../../store/use-app-store';
import { statusLabel } from '../contract/contract-model';

function download(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  URL.revokeObjectURL(url);
}

function FindingItem({ finding, report }: { finding: Finding; report: AuditReport }) {
  const openEvidence = useAppStore((state) => state.openEvidence);
  const { runId } = finding;
  const goal = report.runs.find((run) => run.runId === runId)?.goal;
  return (
    <li className={`finding severity-${finding.severity}`}>
      <span className="severity">{finding.severity}</span> <strong>{inAppTerms(finding.title)}</strong>
      <p className="finding-run">
        In{' '}
        <button type="button" className="link" onClick={() => void openEvidence(runId, null)}>
          run {runId.slice(0, 8)}
          {goal ? `: ${goal}` : ''}
        </button>
      </p>
      <p>{inAppTerms(finding.explanation)}</p>
      <details>
        <summary>Evidence ({finding.evidence.length})</summary>
        <ul>
          {finding.evidence.map((evidence) => (
            <li key={evidence.record}>
              <button type="button" className="link" onClick={() => void openEvidence(runId, evidence.eventSeq)}>
                {evidence.event} #{evidence.eventSeq}
              </button>{' '}
              (audit record {evidence.record})
            </li>
          ))}
        </ul>
      </details>
    </li>
  );
}

/** The auditor's reports and findings, with evidence; verifying the log; export as Markdown or JSON. */
export function AuditView() {
  const runs = useAppStore((state) => state.runs);
  const report = useAppStore((state) => state.report);
  const verification = useAppStore((state) => state.verification);
  const loadReport = useAppStore((state) => state.loadReport);
  const verifyLog = useAppStore((state) => state.verifyLog);
  const selectedRunId = useAppStore((state) => state.selectedRunId);
  const [scope, setScope] = useState<string>(selectedRunId ?? 'today');
  const id = useId();
  useEffect(() => {
    void loadReport(scope === 'today' ? { day: new Date().toISOString().slice(0, 10) } : { runId: scope });
  }, [scope, loadReport]);
  return (
    <section aria-labelledby="audit-heading" className="view audit">
      <h1 id="audit-heading">Audit</h1>
      <div className="audit-controls">
        <label htmlFor={id}>Report on</label>
        <select id={id} value={scope} onChange={(event) => setScope(event.target.value)}>
          <option value="today">today's runs</option>
          {runs.map((run) => (
            <option key={run.id} value={run.id}>
              {run.goal.slice(0, 60)} ({statusLabel(run.status)})
            </option>
          ))}
        </select>
        <button type="button" onClick={() => void verifyLog()}>
          Verify log
        </button>
        {report && (
          <>
            <button type="button" onClick={() => download('archon-audit.md', renderAuditMarkdown(report), 'text/markdown')}>
              Export Markdown
            </button>
            <button type="button" onClick={() => download('archon-audit.json', JSON.stringify(report, null, 2), 'application/json')}>
              Export JSON
            </button>
          </>
        )}
      </div>
      {verification && (
        <p role="status" className={verification.intact ? 'valid' : 'invalid'}>
          {verification.intact ? `The audit log is intact: ${verification.records} records verified.` : `The audit log was TAMPERED with: ${verification.problem}.`}
        </p>
      )}
      {report && (
        <>
          {report.runs.map((run) => (
            <article key={run.runId} className="audit-run">
              <h2>{run.goal ?? `Run ${run.runId.slice(0, 8)}`}</h2>
              <p>
                Outcome {run.status}; steps {Object.entries(run.steps).map(([status, n]) => `${n} ${status}`).join(', ') || 'none'}; approvals {run.approvals.asked} asked ({Object.entries(run.approvals.answers).map(([status, n]) => `${n} ${status}`).join(', ') || 'none answered'}
                {Object.keys(run.approvals.decidedBy).length > 0 && `; decided by ${Object.entries(run.approvals.decidedBy).map(([who, n]) => `${who} ×${n}`).join(', ')}`}); {run.tokens} tokens; ${run.costUsd.toFixed(4)}.
              </p>
            </article>
          ))}
          <h2>Findings ({report.findings.length})</h2>
          {report.findings.length === 0 ? (
            <p className="empty">No findings.</p>
          ) : (
            <ul className="findings" aria-label="Findings">
              {report.findings.map((finding, index) => (
                <FindingItem key={index} finding={finding} report={report} />
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
