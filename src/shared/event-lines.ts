import { describeGapTrend } from './gap-trend';
import { endpointSummary } from './endpoint-summary';
import type { ArchonEvent } from './schemas/events';

/** An event as a line of progress, the same in the terminal and the app; null for one not shown. */
export function describeEvent(event: ArchonEvent): string | null {
  switch (event.type) {
    case 'run.started':
      return `Run ${event.runId}: ${event.goal}`;
    case 'model.probed':
      return `Model ${event.model}: ${endpointSummary(event)}${event.reason ? `\n  why: ${event.reason}` : ''}`;
    case 'model.dialect_detected':
      return `Model writes its tool calls as ${event.dialect}; Archon reads that form for the rest of the run`;
    case 'plan.ready':
      return [`Plan: ${event.plan.steps.length} step(s)`, ...event.plan.steps.map((step) => `  ${step.id}: ${step.description}${step.dependencies.length ? ` (after ${step.dependencies.join(', ')})` : ''}`)].join('\n');
    case 'step.started':
      return `→ ${event.stepId}`;
    case 'tool.completed':
      return `  ${event.tool} [${event.status}]${event.worker ? ` on ${event.worker}` : ''} ${event.content.replace(/\s+/g, ' ').slice(0, 120)}`;
    case 'tool.refused':
      return `  ${event.tool} refused: ${event.reason.replace(/\s+/g, ' ').slice(0, 160)}`;
    case 'step.completed':
      return `✓ ${event.stepId}`;
    case 'step.failed':
      return `✗ ${event.stepId}: ${event.reason}`;
    case 'step.skipped':
      return `– ${event.stepId}: ${event.reason}`;
    case 'validation.completed':
      if (event.stepId === null) return event.verdict === 'fail' ? `Plan check: ${event.reasons.join(' ').slice(0, 300)}` : null;
      return `  validation ${event.verdict}${event.confidence === null ? '' : ` (confidence ${event.confidence.toFixed(2)})`}${event.verdict === 'fail' ? `: ${event.reasons.join(' ').slice(0, 200)}` : ''}`;
    case 'plan.revised':
      return `Plan revision ${event.revision}: ${event.replaced.join(', ')} replaced by ${event.added.join(', ')}`;
    case 'goal.progress':
      return `  gap to the goal ${event.gap.toFixed(2)}${event.delta === null ? '' : ` (${event.delta > 0 ? '+' : ''}${event.delta.toFixed(2)})`}`;
    case 'escalation.raised':
      return `! escalation${event.stepId ? ` at ${event.stepId}` : ''}: ${event.reason}; gap trend ${describeGapTrend(event.gapTrend)}`;
    case 'step.retried':
      return `↻ ${event.stepId}: repair ${event.repair}`;
    case 'contract.ready':
      return event.contract.criteria.length === 0 ? null : [`Done means${event.by === 'operator' ? ' (as the operator edited it)' : ''}:`, ...event.contract.criteria.map((criterion) => `  ${criterion.id}: ${criterion.text}`)].join('\n');
    case 'outcome.checked':
      return [`Outcome check: ${event.verdict}${event.confidence === null ? '' : ` (confidence ${event.confidence.toFixed(2)})`}`, ...event.gaps.map((gap) => `  gap: ${gap}`)].join('\n');
    case 'run.completed':
      return event.gaps && event.gaps.length > 0 ? [`Run completed with gaps the operator accepted:`, ...event.gaps.map((gap) => `  - ${gap}`)].join('\n') : null;
    case 'run.failed':
      return `Run failed: ${event.error}`;
    case 'run.stopped':
      return `Run stopped: ${event.reason}`;
    case 'run.paused':
      return `Run paused: ${event.reason}\n${event.whatToDo}`;
    case 'tool.orphan_killed':
      return `  killed a tool process group (${event.pgid}) a previous process left running`;
    case 'mcp.server_failed':
      return `  MCP server ${event.server} unavailable (${event.kind}): ${event.message}`;
    case 'tool.definition_changed':
      return `  ${event.tool}: its definition changed since it was last seen; earlier approval settings no longer apply, the next call asks`;
    case 'estop.triggered':
      return `Emergency stop (${event.triggeredBy}): ${event.reason}`;
    case 'approval.requested':
      return `? approval (${event.kind}): ${event.summary}`;
    case 'approval.resolved':
      return `  → ${event.status}`;
    case 'policy.tightened':
      return `Policy tightened from ${event.from} to ${event.to}: ${event.reasons.join('; ')}`;
    case 'budget.warning':
      return `Budget: ${event.message}`;
    default:
      return null;
  }
}
