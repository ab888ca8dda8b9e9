import type { Detection } from '../shared/schemas/audit';
import type { RunEvent } from '../shared/schemas/events';
import { MAX_SUBAGENT_DEPTH } from '../shared/schemas/roles';
import type { Policy } from '../shared/schemas/run';
import { asksAt } from '../shared/policy';
import type { AuditedEvent } from './detectors';

/*
 * The run's course as its events tell it: steps acting outside their roles, re-plans, escalations
 * and sub-agents spawned. Severity follows what happened, not what was attempted: a call refused
 * before it started is information about the model; one that ran outside its role is an alarm.
 */

type Event<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;

const cite = (item: AuditedEvent) => ({ record: item.seq, event: item.event.type, eventSeq: item.event.seq });
const list = (names: readonly string[]) => names.join(', ') || 'none';

interface StepRole {
  role: string;
  tools: readonly string[];
  started: AuditedEvent;
}

/** The tools a started step's role may use, when its role names them (a role with every tool cannot drift). */
function limitedRole(item: AuditedEvent): StepRole | null {
  const event = item.event as Event<'step.started'>;
  return event.role !== undefined && Array.isArray(event.roleTools) ? { role: event.role, tools: event.roleTools, started: item } : null;
}

/** Tools the model of a step asked for outside its role: what it said it called, and what Archon refused for the role. */
function askedOutside(item: AuditedEvent, role: StepRole): string[] {
  const event = item.event;
  if (event.type === 'model.completed') return event.toolCalls.filter((tool) => !role.tools.includes(tool));
  if (event.type === 'tool.refused' && event.code === 'not_allowed_for_role') return [event.tool];
  return [];
}

/**
 * Role drift: a step's tool call outside its role's tools. One that ran is high (the role's
 * confinement did not hold); one its model only asked for, and that never ran, is low.
 */
export function roleDriftFindings(events: readonly AuditedEvent[]): Detection[] {
  const findings: Detection[] = [];
  const roles = new Map<string, StepRole | null>();
  const asked = new Map<string, { stepId: string; tool: string; role: StepRole; evidence: AuditedEvent[] }>();
  const ran = new Set<string>();
  for (const item of events) {
    const event = item.event;
    if (event.type === 'step.started') roles.set(event.stepId, limitedRole(item));
    const stepId = 'stepId' in event && typeof event.stepId === 'string' ? event.stepId : null;
    const role = stepId === null ? null : roles.get(stepId);
    if (!role || stepId === null) continue;
    if (event.type === 'tool.started' && !role.tools.includes(event.tool)) {
      ran.add(`${stepId}\u0000${event.tool}`);
      findings.push({
        detector: 'role',
        severity: 'high',
        title: `${event.tool} ran outside the role ${role.role}`,
        explanation: `Step ${stepId} runs as ${role.role}, whose tools are ${list(role.tools)}; yet ${event.tool} started in it.`,
        evidence: [cite(role.started), cite(item)],
      });
    }
    for (const tool of askedOutside(item, role)) {
      const key = `${stepId}\u0000${tool}`;
      const entry = asked.get(key) ?? { stepId, tool, role, evidence: [] };
      if (!entry.evidence.includes(item)) entry.evidence.push(item);
      asked.set(key, entry);
    }
  }
  for (const [key, { stepId, tool, role, evidence }] of asked) {
    if (ran.has(key)) continue;
    findings.push({
      detector: 'role',
      severity: 'low',
      title: `Step ${stepId}'s model asked for ${tool}, outside the role ${role.role}`,
      explanation: `The role's tools are ${list(role.tools)}; ${tool} was not offered to it and did not run. The model was told so.`,
      evidence: [cite(role.started), ...evidence.slice(0, 20).map(cite)],
    });
  }
  return findings;
}

/**
 * Re-plans: each one is information (what was replaced, and why). Using every re-plan the run
 * allows is low (recovery is down to the operator); more than the cap is high (the cap did not hold).
 */
export function replanFindings(events: readonly AuditedEvent[]): Detection[] {
  const cap = events.map(({ event }) => (event.type === 'run.started' ? event.maxReplans : undefined)).find((value) => value !== undefined);
  const revisions = events.filter((item) => item.event.type === 'plan.revised');
  const findings: Detection[] = revisions.map((item) => {
    const event = item.event as Event<'plan.revised'>;
    return { detector: 'replan', severity: 'info', title: `Re-plan ${event.revision}: ${list(event.replaced)} replaced by ${list(event.added)}`, explanation: event.reason, evidence: [cite(item)] };
  });
  if (cap === undefined || revisions.length < cap || revisions.length === 0) return findings;
  const over = revisions.length > cap;
  findings.push({
    detector: 'replan',
    severity: over ? 'high' : 'low',
    title: over ? `${revisions.length} re-plans, past the run's cap of ${cap}` : `The run used all ${cap} of its re-plans`,
    explanation: over ? 'The runtime re-planned more often than the run allows; the cap did not hold.' : 'Recovery had no re-plan left: a further failure goes to the operator.',
    evidence: revisions.map(cite),
  });
  return findings;
}

/**
 * Escalations: a failed step put to the operator once repairs and re-plans were spent. Low: the
 * chain worked as designed, but the run could not go on by itself; the answer is cited with it.
 */
export function escalationFindings(events: readonly AuditedEvent[]): Detection[] {
  const answers = new Map<string, AuditedEvent>();
  for (const item of events) if (item.event.type === 'approval.resolved') answers.set(item.event.approvalId, item);
  return events.flatMap((item) => {
    if (item.event.type !== 'escalation.raised') return [];
    const event = item.event;
    const answer = answers.get(event.approvalId);
    const resolved = answer?.event as Event<'approval.resolved'> | undefined;
    const outcome = resolved ? `The answer: ${resolved.status}${resolved.decision.verdict === 'edit' ? ` (${JSON.stringify(resolved.decision.edited)})` : ''}.` : 'No answer is recorded.';
    return [{
      detector: 'escalation' as const,
      severity: 'low' as const,
      title: `Step ${event.stepId ?? '(run)'} was escalated to the operator`,
      explanation: `${event.reason}. ${outcome}`,
      evidence: [cite(item), ...(answer ? [cite(answer)] : [])],
    }];
  });
}

/**
 * Sub-agents spawned: each is information (step, depth, goal). One past the depth limit, or without
 * the approval its policy asks for, is high: a bound the operator relies on did not hold.
 */
export function spawnFindings(events: readonly AuditedEvent[]): Detection[] {
  const findings: Detection[] = [];
  let policy: Policy = 'balanced';
  /** Steps whose `subagent_spawn` request was answered yes (a lock lets the spawn run too). */
  const requests = new Map<string, string | null>();
  const approved = new Set<string>();
  for (const item of events) {
    const event = item.event;
    if (event.type === 'run.started') policy = event.policy;
    else if (event.type === 'policy.tightened') policy = event.to;
    else if (event.type === 'approval.requested' && event.kind === 'subagent_spawn') requests.set(event.approvalId, event.stepId);
    else if (event.type === 'approval.resolved' && event.decision.verdict !== 'reject' && requests.has(event.approvalId)) approved.add(requests.get(event.approvalId) ?? '');
    if (event.type !== 'subagent.started') continue;
    findings.push({ detector: 'spawn', severity: 'info', title: `Step ${event.stepId} spawned a sub-agent (depth ${event.depth})`, explanation: `Run ${event.childRunId}${event.role ? ` as ${event.role}` : ''}: ${event.goal}`, evidence: [cite(item)] });
    if (event.depth > MAX_SUBAGENT_DEPTH) {
      findings.push({ detector: 'spawn', severity: 'high', title: `A sub-agent at depth ${event.depth}, past the limit of ${MAX_SUBAGENT_DEPTH}`, explanation: `Step ${event.stepId} started run ${event.childRunId} deeper than sub-agents may nest.`, evidence: [cite(item)] });
    }
    if (asksAt(policy, 'subagent_spawn') && !approved.delete(event.stepId)) {
      findings.push({ detector: 'spawn', severity: 'high', title: `Step ${event.stepId} spawned a sub-agent without the approval its policy required`, explanation: `Under the ${policy} policy a person approves each sub-agent first; no approval of this one precedes it.`, evidence: [cite(item)] });
    }
  }
  return findings;
}
