import type { AuditReport } from './schemas/audit';

function describeCounts(counts: Record<string, number>): string {
  return Object.entries(counts).map(([kind, n]) => `${kind} ×${n}`).join(', ') || 'nothing';
}

/** The auditor's report as Markdown: what `archon audit report` prints and the app exports. */
export function renderAuditMarkdown(report: AuditReport): string {
  const lines = [`# Audit report — ${'runId' in report.scope ? `run ${report.scope.runId}` : `day ${report.scope.day}`}`, '', `Generated ${report.generatedAt}.`, ''];
  if (report.runs.length === 0) lines.push('No audited runs in this scope.', '');
  for (const run of report.runs) {
    lines.push(
      `## Run ${run.runId}`,
      '',
      `- Goal: ${run.goal ?? '(unknown)'}`,
      `- Outcome: ${run.status}`,
      `- Steps: ${Object.entries(run.steps).map(([status, n]) => `${n} ${status}`).join(', ') || 'none'}`,
      `- Tool calls: ${Object.entries(run.toolCalls).map(([tool, n]) => `${tool} ×${n}`).join(', ') || 'none'}`,
      `- Approvals: ${run.approvals.asked} asked; ${Object.entries(run.approvals.answers).map(([status, n]) => `${n} ${status}`).join(', ') || 'none answered'}`,
      `- Decided by: ${Object.entries(run.approvals.decidedBy).map(([who, n]) => `${who} ×${n}`).join(', ') || 'no answers'}`,
      `- Tokens: ${run.tokens}; cost: $${run.costUsd.toFixed(4)}; time: ${run.durationMs === null ? '?' : `${(run.durationMs / 1000).toFixed(1)} s`}`,
      `- Agents on the bus: ${Object.keys(run.agents).length || 'none'}`,
      ...Object.entries(run.agents).map(([id, counts]) => `  - ${id}: sent ${describeCounts(counts.sent)}; received ${describeCounts(counts.received)}`),
      '',
    );
  }
  lines.push(`## Findings (${report.findings.length})`, '');
  if (report.findings.length === 0) lines.push('None.');
  for (const finding of report.findings) {
    lines.push(`### [${finding.severity}] ${finding.title}`, '', finding.explanation, '', `Evidence: ${finding.evidence.map((item) => `record ${item.record} (${item.event} #${item.eventSeq})`).join(', ')}`, '');
  }
  return `${lines.join('\n')}\n`;
}
