import { stepAgentId, type BusEnvelope, type BusMessageKind } from '../../shared/schemas/bus';
import type { AgentBus } from './agent-bus';

/** Where a hand-off is published: the run's bus. */
export interface HandOffScope {
  runId: string;
  bus: AgentBus;
}

export interface HandOffRequest {
  from: string;
  to: string;
  /** `task` (the default) or `escalation`. */
  kind?: Extract<BusMessageKind, 'task' | 'escalation'>;
  body: string;
}

/**
 * One hand-off between agents, on the bus: the request is published (stored, then announced) before
 * the work starts (a resumed run reuses the one it left open), and the answer goes back to the sender correlated with it (`result`, or the
 * operator's `decision` on an escalation). Work that throws (a stop, an exhausted budget) sends no answer.
 */
export async function handOff<T>(scope: HandOffScope, request: HandOffRequest, work: (task: BusEnvelope) => Promise<T>, answer: (value: T) => string): Promise<T> {
  const kind = request.kind ?? 'task';
  const task = scope.bus.request(scope.runId, { from: request.from, to: request.to, kind, body: request.body });
  const value = await work(task);
  scope.bus.publish(scope.runId, { from: request.to, to: request.from, kind: kind === 'escalation' ? 'decision' : 'result', body: answer(value), correlationId: task.id });
  return value;
}

/** The planner's task: the goal, and the operator's feedback on earlier plans. */
export function planningTask(goal: string, feedback: readonly string[]): string {
  return [`Goal: ${goal}`, ...feedback.map((line) => `Operator feedback: ${line}`)].join('\n');
}

/** The critic's verdict on a step's result, to the coordinator, correlated with the step's task. */
export function publishCritique(scope: HandOffScope, step: { id: string; role?: string }, verdict: { verdict: string; confidence: number | null; reasons: readonly string[] }): BusEnvelope {
  const task = scope.bus.lastTask(scope.runId, stepAgentId(step));
  const confidence = verdict.confidence === null ? '' : ` (confidence ${verdict.confidence.toFixed(2)})`;
  return scope.bus.publish(scope.runId, { from: 'critic', to: 'coordinator', kind: 'critique', body: `Step ${step.id}: ${verdict.verdict}${confidence}: ${verdict.reasons.join(' ')}`, ...(task ? { correlationId: task.correlationId } : {}) });
}
