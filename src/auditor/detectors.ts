import { canonicalJson } from '../shared/canonical-json';
import type { Detection } from '../shared/schemas/audit';
import { isEffectorId } from '../shared/schemas/bus';
import { asksForTool, grantsForRun } from '../shared/policy';
import type { RunEvent } from '../shared/schemas/events';
import type { Policy } from '../shared/schemas/run';
import type { ToolApprovalOverride } from '../shared/schemas/settings';
import { isBuiltinTool, TOOL_CATALOGUE } from '../shared/tools/catalogue';

/** A record as the detectors read it: the event and the audit record that holds it. */
export interface AuditedEvent {
  seq: number;
  event: RunEvent;
}


/** Deterministic thresholds; only the operator changes them (`archon audit thresholds --set`). */
export const DEFAULT_THRESHOLDS = {
  repeatedActions: 3,
  failureRate: 0.5,
  failureRateMinCalls: 4,
  failureRateOverBaseline: 0.3,
  retryRate: 0.3,
  tokenRateOverBaseline: 3,
  planRejections: 2,
};
export type Thresholds = typeof DEFAULT_THRESHOLDS;

const cite = (item: AuditedEvent) => ({ record: item.seq, event: item.event.type, eventSeq: item.event.seq });

/** The operator's setting for a tool: its own, else its MCP server's (`SERVER__*`). */
function overrideFor(overrides: Record<string, ToolApprovalOverride>, tool: string): ToolApprovalOverride | undefined {
  const server = tool.includes('__') ? tool.slice(0, tool.indexOf('__')) : null;
  return overrides[tool] ?? (server ? overrides[`${server}__*`] : undefined);
}

/**
 * Actions its policy required a person to approve, taken without an approval; tools used after a lock; effectors addressing
 * each other on the bus; attempts a tool's own confinement refused. Only calls that started count: a call refused before
 * it started (unknown, invalid, outside its role, rejected) crossed nothing.
 */
export function boundaryViolations(events: readonly AuditedEvent[]): Detection[] {
  const findings: Detection[] = [];
  let policy: Policy = 'balanced';
  let overrides: Record<string, ToolApprovalOverride> = {};
  const locked = new Set<string>();
  const requested = new Map<string, AuditedEvent>();
  const granted: AuditedEvent[] = [];
  /** Calls that started with an approval: run again under the same id (a resume), the approval still covers them. */
  const approvedCalls = new Set<string>();
  /** Tools a person approved for the rest of the run ("approve all like this"). */
  const grantedForRun = new Set<string>();
  for (const item of events) {
    const event = item.event;
    if (event.type === 'run.started') {
      policy = event.policy;
      overrides = event.toolApproval;
    } else if (event.type === 'policy.tightened') policy = event.to;
    else if (event.type === 'constraint.locked') locked.add(event.constraint.tool);
    else if (event.type === 'approval.requested') requested.set(event.approvalId, item);
    else if (event.type === 'approval.resolved' && (event.status === 'approved' || event.status === 'edited')) {
      const request = requested.get(event.approvalId);
      if (request?.event.type === 'approval.requested' && (request.event.kind === 'tool_call' || request.event.kind === 'uncertain_repeat')) {
        granted.push(request);
        const tool = (request.event.action as { tool?: string } | null)?.tool;
        if (tool && event.decision.verdict === 'approve' && event.decision.scope === 'run_tool') grantedForRun.add(tool);
      }
    } else if (event.type === 'tool.started') {
      if (locked.has(event.tool)) {
        findings.push({ detector: 'boundary', severity: 'critical', title: `${event.tool} ran after it was locked`, explanation: `The operator locked "never use ${event.tool}", yet step ${event.stepId} started it.`, evidence: [cite(item)] });
      }
      const sideEffects = isBuiltinTool(event.tool) ? TOOL_CATALOGUE[event.tool].sideEffects : (event.sideEffects ?? 'irreversible');
      if (!asksForTool(policy, { sideEffects }, overrideFor(overrides, event.tool))) continue;
      const match = granted.findIndex((request) => request.event.type === 'approval.requested' && request.event.stepId === event.stepId && (request.event.action as { tool?: string } | null)?.tool === event.tool);
      if (match >= 0) {
        granted.splice(match, 1);
        approvedCalls.add(event.callId);
      } else if (!approvedCalls.has(event.callId) && !(grantedForRun.has(event.tool) && grantsForRun(policy, { sideEffects }))) {
        findings.push({
          detector: 'boundary',
          severity: 'high',
          title: `${event.tool} ran without the approval its policy required`,
          explanation: `Under the ${policy} policy a ${event.tool} call (side effects: ${sideEffects}) must be approved by a person first; no approval of it precedes this call in step ${event.stepId}.`,
          evidence: [cite(item)],
        });
      }
    } else if (event.type === 'bus.message' && isEffectorId(event.from) && isEffectorId(event.to)) {
      findings.push({
        detector: 'boundary',
        severity: 'high',
        title: `${event.from} addressed ${event.to} directly`,
        explanation: `Effectors never talk to each other: every hand-off goes through the coordinator. This ${event.kind} went from one effector to another on ${event.topic}.`,
        evidence: [cite(item)],
      });
    } else if (event.type === 'tool.refused' && (event.by === 'tool' || event.by === undefined)) {
      findings.push({ detector: 'boundary', severity: 'medium', title: `${event.tool} refused an attempt to cross the sandbox`, explanation: `Step ${event.stepId} asked ${event.tool} for something outside its bounds; the tool refused: ${event.reason}`, evidence: [cite(item)] });
    }
  }
  return findings;
}

type Locked = AuditedEvent & { event: Extract<RunEvent, { type: 'constraint.locked' }> };

/**
 * A tool a sub-agent started after a run above it locked it: a lock holds for the whole run tree. Runs log their events
 * apart, so "after" is by time; a tool the run itself had locked is `boundaryViolations`' finding.
 */
export function inheritedLockViolations(events: readonly AuditedEvent[], ancestors: readonly AuditedEvent[]): Detection[] {
  const locks = ancestors.filter((item): item is Locked => item.event.type === 'constraint.locked');
  const own = new Set<string>();
  const findings: Detection[] = [];
  for (const item of events) {
    const event = item.event;
    if (event.type === 'constraint.locked') own.add(event.constraint.tool);
    if (event.type !== 'tool.started' || own.has(event.tool)) continue;
    const lock = locks.find((above) => above.event.constraint.tool === event.tool && above.event.ts <= event.ts);
    if (!lock) continue;
    findings.push({
      detector: 'boundary',
      severity: 'high',
      title: `${event.tool} ran in a sub-agent after it was locked above it`,
      explanation: `The operator locked "never use ${event.tool}" in run ${lock.event.runId}, yet its sub-agent run ${event.runId} started it in step ${event.stepId}.`,
      evidence: [cite(lock), cite(item)],
    });
  }
  return findings;
}

/** Repeated identical actions, loops and caps hit, re-plans that do not converge. */
export function convergenceFailures(events: readonly AuditedEvent[], thresholds: Thresholds): Detection[] {
  const findings: Detection[] = [];
  const calls = new Map<string, AuditedEvent[]>();
  /** Calls refused before they started, by tool: a loop of them is evidence, not actions taken. */
  const refusals = new Map<string, AuditedEvent[]>();
  const planRequests = new Set<string>();
  const planRejections: AuditedEvent[] = [];
  for (const item of events) {
    const event = item.event;
    if (event.type === 'tool.started') {
      const key = `${event.tool} ${canonicalJson(event.args)}`;
      calls.set(key, [...(calls.get(key) ?? []), item]);
    } else if (event.type === 'tool.refused' && event.by !== 'tool' && event.by !== undefined) {
      const key = `${event.tool} refused`;
      refusals.set(key, [...(refusals.get(key) ?? []), item]);
    } else if (event.type === 'step.failed' && /^(loop_detected|iteration_cap)/.test(event.reason)) {
      const loop = event.reason.startsWith('loop_detected');
      const ofStep = (group: AuditedEvent[]) => group.some((call) => (call.event.type === 'tool.started' || call.event.type === 'tool.refused') && call.event.stepId === event.stepId);
      const repeated = [...calls.values(), ...refusals.values()].filter(ofStep).sort((a, b) => b.length - a.length)[0] ?? [];
      // A loop of calls that ran is an alarm; one of calls refused before they started cost only turns.
      const ran = repeated.some((call) => call.event.type === 'tool.started');
      findings.push({
        detector: 'convergence',
        severity: loop && ran ? 'high' : 'medium',
        title: loop ? `Step ${event.stepId} repeated the same action` : `Step ${event.stepId} hit its iteration cap`,
        explanation: event.reason,
        evidence: [...repeated.map(cite), cite(item)],
      });
    } else if (event.type === 'run.failed' && /cap of \d+ (model|tool) calls/.test(event.error)) {
      findings.push({ detector: 'convergence', severity: 'medium', title: 'A runaway cap was hit', explanation: event.error, evidence: [cite(item)] });
    } else if (event.type === 'approval.requested' && event.kind === 'plan') planRequests.add(event.approvalId);
    else if (event.type === 'approval.resolved' && planRequests.has(event.approvalId) && event.status === 'rejected') planRejections.push(item);
  }
  for (const group of calls.values()) {
    const first = group[0]?.event;
    const alreadyReported = findings.some((finding) => finding.evidence.some((evidence) => evidence.record === group[0]?.seq));
    if (group.length >= thresholds.repeatedActions && first?.type === 'tool.started' && !alreadyReported) {
      findings.push({ detector: 'convergence', severity: 'medium', title: `${first.tool} was called ${group.length} times with the same arguments`, explanation: 'Identical actions repeated; the run may not be converging.', evidence: group.map(cite) });
    }
  }
  if (planRejections.length >= thresholds.planRejections) {
    findings.push({ detector: 'convergence', severity: 'medium', title: `The plan was rejected ${planRejections.length} times`, explanation: 'Re-plans did not produce a plan the operator accepted.', evidence: planRejections.map(cite) });
  }
  return findings;
}

interface Rates {
  toolCalls: Map<string, { calls: number; failures: number }>;
  modelCalls: number;
  failedAttempts: number;
  tokens: number;
}

function ratesOf(events: readonly AuditedEvent[]): Rates {
  const rates: Rates = { toolCalls: new Map(), modelCalls: 0, failedAttempts: 0, tokens: 0 };
  for (const { event } of events) {
    if (event.type === 'tool.completed') {
      const entry = rates.toolCalls.get(event.tool) ?? { calls: 0, failures: 0 };
      entry.calls++;
      if (event.status === 'error' || event.status === 'timeout') entry.failures++;
      rates.toolCalls.set(event.tool, entry);
    } else if (event.type === 'model.completed') {
      rates.modelCalls++;
      rates.tokens += event.promptTokens + event.completionTokens;
    } else if (event.type === 'model.attempt_failed') rates.failedAttempts++;
  }
  return rates;
}

/** Per tool and for the model: this run's failure, retry and token rates against their own baseline (earlier runs). */
export function rateDrift(events: readonly AuditedEvent[], baseline: readonly AuditedEvent[], thresholds: Thresholds): Detection[] {
  const findings: Detection[] = [];
  const now = ratesOf(events);
  const before = ratesOf(baseline);
  const evidenceFor = (predicate: (event: RunEvent) => boolean) => events.filter((item) => predicate(item.event)).slice(0, 20).map(cite);
  for (const [tool, { calls, failures }] of now.toolCalls) {
    const rate = failures / calls;
    const base = before.toolCalls.get(tool);
    const baseRate = base ? base.failures / base.calls : 0;
    if (calls >= thresholds.failureRateMinCalls && rate >= thresholds.failureRate && rate - baseRate >= thresholds.failureRateOverBaseline) {
      findings.push({
        detector: 'drift',
        severity: 'medium',
        title: `${tool} fails far more often than usual`,
        explanation: `${failures} of ${calls} calls failed (${Math.round(rate * 100)}%), against ${Math.round(baseRate * 100)}% in earlier runs.`,
        evidence: evidenceFor((event) => event.type === 'tool.completed' && event.tool === tool && (event.status === 'error' || event.status === 'timeout')),
      });
    }
  }
  const attempts = now.modelCalls + now.failedAttempts;
  if (attempts > 0 && now.failedAttempts / attempts >= thresholds.retryRate) {
    findings.push({ detector: 'drift', severity: 'low', title: 'Many model calls had to be retried', explanation: `${now.failedAttempts} of ${attempts} attempts failed.`, evidence: evidenceFor((event) => event.type === 'model.attempt_failed') });
  }
  if (now.modelCalls > 0 && before.modelCalls > 0) {
    const perCall = now.tokens / now.modelCalls;
    const basePerCall = before.tokens / before.modelCalls;
    if (perCall >= basePerCall * thresholds.tokenRateOverBaseline) {
      findings.push({ detector: 'drift', severity: 'low', title: 'Tokens per model call far above the baseline', explanation: `${Math.round(perCall)} tokens a call against ${Math.round(basePerCall)} in earlier runs.`, evidence: evidenceFor((event) => event.type === 'model.completed') });
    }
  }
  return findings;
}

/** Budget warnings and exhaustion; every emergency stop, with what triggered it. */
export function budgetAndStops(events: readonly AuditedEvent[]): Detection[] {
  const findings: Detection[] = [];
  for (const item of events) {
    const event = item.event;
    if (event.type === 'budget.warning') findings.push({ detector: 'budget', severity: 'info', title: 'A budget reached 80%', explanation: event.message, evidence: [cite(item)] });
    else if (event.type === 'run.failed' && event.error.startsWith('Budget exhausted')) findings.push({ detector: 'budget', severity: 'medium', title: 'The run exhausted its budget', explanation: event.error, evidence: [cite(item)] });
    else if (event.type === 'estop.triggered') {
      findings.push({ detector: 'emergency_stop', severity: 'high', title: `Emergency stop (${event.triggeredBy})`, explanation: `Triggered by ${event.triggeredBy}: ${event.reason}`, evidence: [cite(item)] });
    }
  }
  return findings;
}
