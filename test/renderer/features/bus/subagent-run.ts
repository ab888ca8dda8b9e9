import type { BusEnvelope } from '../../../../src/shared/schemas/bus';
import type { RunEvent } from '../../../../src/shared/schemas/events';
import type { PlanStep } from '../../../../src/shared/schemas/plan';

/**
 * A finished run whose step `research` ran as a sub-agent (`child-run`), and every hand-off between its agents on the bus:
 * the plan, each step's task and result, the sub-agent's task and answer, a critique.
 */
export const PARENT = { id: 'parent-run', goal: 'Compare two sources' };
export const CHILD = { id: 'child-run', goal: 'Read both sources' };

export const PARENT_PLAN: PlanStep[] = [
  { id: 'gather', description: 'list the two sources', dependencies: [] },
  { id: 'research', description: 'read both sources', dependencies: ['gather'], kind: 'subagent', goal: CHILD.goal },
  { id: 'report', description: 'write the comparison', dependencies: ['research'] },
];
export const CHILD_PLAN: PlanStep[] = [
  { id: 'read-a', description: 'read source A', dependencies: [] },
  { id: 'read-b', description: 'read source B', dependencies: [] },
  { id: 'merge', description: 'merge the notes', dependencies: ['read-a', 'read-b'] },
];
export const CHILD_STATUSES = { 'read-a': 'completed', 'read-b': 'skipped', merge: 'completed' } as const;

type Body = { [K in RunEvent['type']]: Omit<Extract<RunEvent, { type: K }>, 'runId' | 'seq' | 'ts'> }[RunEvent['type']];

const message = (id: string, correlationId: string, from: string, to: string, kind: BusEnvelope['kind'], body: string, topic = `agent:${to}`): Body => ({ type: 'bus.message', id, correlationId, from, to, topic, kind, body });

/** The bus messages of the parent run, in the order they were sent. */
export const MESSAGES: Body[] = [
  message('m1', 'c1', 'coordinator', 'planner', 'task', `Plan the goal: ${PARENT.goal}`),
  message('m2', 'c1', 'planner', 'coordinator', 'result', JSON.stringify({ goal: PARENT.goal, steps: PARENT_PLAN })),
  message('m3', 'c2', 'coordinator', 'executor:gather', 'task', 'list the two sources'),
  message('m4', 'c2', 'executor:gather', 'coordinator', 'result', 'A and B'),
  message('m5', 'c3', 'coordinator', `subagent:${CHILD.id}`, 'task', CHILD.goal),
  message('m6', 'c3', `subagent:${CHILD.id}`, 'coordinator', 'result', 'A says yes, B says no'),
  message('m7', 'c4', 'critic', 'coordinator', 'critique', 'The notes answer the sub-goal', 'type:critique'),
  message('m8', 'c5', 'coordinator', 'executor:report', 'task', 'write the comparison'),
  message('m9', 'c5', 'executor:report', 'coordinator', 'result', 'A and B disagree'),
];

function numbered(runId: string, bodies: Body[]): RunEvent[] {
  return bodies.map((body, index) => ({ ...body, runId, seq: index + 1, ts: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString() }) as RunEvent);
}

export function parentEvents(): RunEvent[] {
  const [plan, planned, gatherTask, gathered, subTask, subAnswer, critique, reportTask, reported] = MESSAGES as [Body, Body, Body, Body, Body, Body, Body, Body, Body];
  return numbered(PARENT.id, [
    { type: 'run.started', goal: PARENT.goal, policy: 'balanced', toolApproval: {} },
    plan,
    planned,
    { type: 'plan.ready', plan: { goal: PARENT.goal, steps: PARENT_PLAN } },
    { type: 'step.started', stepId: 'gather' },
    gatherTask,
    gathered,
    { type: 'step.completed', stepId: 'gather', result: 'A and B' },
    { type: 'step.started', stepId: 'research' },
    { type: 'subagent.started', stepId: 'research', childRunId: CHILD.id, goal: CHILD.goal, role: null, depth: 1 },
    subTask,
    subAnswer,
    critique,
    { type: 'step.completed', stepId: 'research', result: 'A says yes, B says no' },
    { type: 'step.started', stepId: 'report' },
    reportTask,
    reported,
    { type: 'step.completed', stepId: 'report', result: 'A and B disagree' },
  ]);
}

export function childEvents(): RunEvent[] {
  return numbered(CHILD.id, [
    { type: 'run.started', goal: CHILD.goal, policy: 'balanced', toolApproval: {}, parentRunId: PARENT.id, parentStepId: 'research' },
    { type: 'plan.ready', plan: { goal: CHILD.goal, steps: CHILD_PLAN } },
    { type: 'step.started', stepId: 'read-a' },
    { type: 'step.completed', stepId: 'read-a', result: 'A says yes' },
    { type: 'step.skipped', stepId: 'read-b', reason: 'source B was already in the notes' },
    { type: 'step.started', stepId: 'merge' },
    { type: 'step.completed', stepId: 'merge', result: 'A says yes, B says no' },
  ]);
}
