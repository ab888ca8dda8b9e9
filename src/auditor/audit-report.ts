import { parseJsonOrUndefined } from '../shared/json';
import { ArchonEventSchema, type RunEvent } from '../shared/schemas/events';
import type { AuditLog } from './audit-log';
import type { AuditReport, AuditRunSummary, Detection, Finding } from '../shared/schemas/audit';
import { escalationFindings, replanFindings, roleDriftFindings, spawnFindings } from './course-detectors';
import { injectionFindings } from './injection-detectors';
import { outcomeFindings } from './outcome-detectors';
import { boundaryViolations, budgetAndStops, convergenceFailures, DEFAULT_THRESHOLDS, inheritedLockViolations, rateDrift, type AuditedEvent, type Thresholds } from './detectors';

const SEVERITY_ORDER = ['critical', 'high', 'medium', 'low', 'info'];

function runEvents(records: ReturnType<AuditLog['records']>): AuditedEvent[] {
  return records.flatMap((record) => {
    const parsed = ArchonEventSchema.safeParse(parseJsonOrUndefined(record.canonical_json));
    return parsed.success && 'runId' in parsed.data ? [{ seq: record.seq, event: parsed.data as RunEvent }] : [];
  });
}

function deciderKey(event: Extract<RunEvent, { type: 'approval.resolved' }>): string {
  if (!event.decidedBy) return 'unrecorded';
  return event.channel ? `${event.decidedBy}:${event.channel}` : event.decidedBy;
}

function summarize(runId: string, events: readonly AuditedEvent[]): AuditRunSummary {
  const summary: AuditRunSummary = { runId, goal: null, status: 'unfinished', steps: {}, toolCalls: {}, approvals: { asked: 0, answers: {}, decidedBy: {} }, tokens: 0, costUsd: 0, durationMs: null, agents: {} };
  const agent = (id: string) => (summary.agents[id] ??= { sent: {}, received: {} });
  const count = (map: Record<string, number>, key: string) => (map[key] = (map[key] ?? 0) + 1);
  for (const { event } of events) {
    if (event.type === 'run.started') summary.goal = event.goal;
    else if (event.type === 'step.completed' || event.type === 'step.failed' || event.type === 'step.skipped') count(summary.steps, event.type.slice(5));
    else if (event.type === 'tool.started') count(summary.toolCalls, event.tool);
    else if (event.type === 'approval.requested') summary.approvals.asked++;
    else if (event.type === 'bus.message') {
      count(agent(event.from).sent, event.kind);
      count(agent(event.to).received, event.kind);
    }
    else if (event.type === 'approval.resolved') {
      count(summary.approvals.answers, event.status);
      count(summary.approvals.decidedBy, deciderKey(event));
    }
    else if (event.type === 'budget.updated') {
      summary.tokens = event.tokens;
      summary.costUsd = event.costUsd;
    } else if (event.type === 'run.completed') summary.status = (event.gaps ?? []).length > 0 ? 'completed_with_gaps' : 'completed';
    else if (event.type === 'run.failed' || event.type === 'run.stopped') summary.status = event.type.slice(4);
  }
  const first = events[0]?.event.ts;
  const last = events.at(-1)?.event.ts;
  summary.durationMs = first && last ? Date.parse(last) - Date.parse(first) : null;
  return summary;
}

function findingsFor(events: readonly AuditedEvent[], context: { baseline: readonly AuditedEvent[]; ancestors: readonly AuditedEvent[] }, thresholds: Thresholds): Detection[] {
  const { baseline, ancestors } = context;
  return [...boundaryViolations(events), ...inheritedLockViolations(events, ancestors), ...convergenceFailures(events, thresholds), ...rateDrift(events, baseline, thresholds), ...roleDriftFindings(events), ...replanFindings(events), ...escalationFindings(events), ...spawnFindings(events), ...outcomeFindings(events), ...injectionFindings(events), ...budgetAndStops(events)].sort(
    (a, b) => SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity),
  );
}

/** A run and its sub-agents' runs at every depth, as its `subagent.started` events name them. */
function withSubagents(runId: string, byRun: ReadonlyMap<string, readonly AuditedEvent[]>): string[] {
  const ids = [runId];
  for (let index = 0; index < ids.length && index < byRun.size; index++) {
    for (const { event } of byRun.get(ids[index] as string) ?? []) {
      if (event.type === 'subagent.started' && !ids.includes(event.childRunId)) ids.push(event.childRunId);
    }
  }
  return ids.filter((id) => byRun.has(id));
}

const parentOf = (events: readonly AuditedEvent[] | undefined): string | undefined => {
  const started = events?.find((item) => item.event.type === 'run.started')?.event;
  return started?.type === 'run.started' ? started.parentRunId : undefined;
};

/** The events of the runs above `runId` (its parent's, theirs, …), as each one's `run.started` names its parent. */
function ancestorEvents(runId: string, byRun: ReadonlyMap<string, readonly AuditedEvent[]>): AuditedEvent[] {
  const seen = new Set([runId]);
  const above: AuditedEvent[] = [];
  for (let parent = parentOf(byRun.get(runId)); parent && !seen.has(parent); parent = parentOf(byRun.get(parent))) {
    seen.add(parent);
    above.push(...(byRun.get(parent) ?? []));
  }
  return above;
}

/** The auditor's report on one run (its sub-agents' runs included), or on every run of a day: a summary and findings with evidence. */
export function buildReport(log: AuditLog, scope: { runId: string } | { day: string }, now: Date = new Date()): AuditReport {
  const thresholds = { ...DEFAULT_THRESHOLDS, ...log.thresholdOverrides() };
  const all = runEvents(log.records());
  const byRun = new Map<string, AuditedEvent[]>();
  for (const item of all) byRun.set(item.event.runId, [...(byRun.get(item.event.runId) ?? []), item]);
  const runIds = 'runId' in scope ? withSubagents(scope.runId, byRun) : [...byRun.keys()].filter((id) => byRun.get(id)?.[0]?.event.ts.startsWith(scope.day));
  const runs: AuditRunSummary[] = [];
  const findings: Finding[] = [];
  for (const runId of runIds) {
    const events = byRun.get(runId) ?? [];
    const baseline = all.filter((item) => item.event.runId !== runId && item.seq < (events[0]?.seq ?? 0));
    runs.push(summarize(runId, events));
    findings.push(...findingsFor(events, { baseline, ancestors: ancestorEvents(runId, byRun) }, thresholds).map((detection) => ({ ...detection, runId })));
  }
  return { scope, generatedAt: now.toISOString(), runs, findings };
}
