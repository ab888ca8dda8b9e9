import type { RunEvent } from '../../../../src/shared/schemas/events';
import type { PlanStep } from '../../../../src/shared/schemas/plan';

/**
 * A run that validation and recovery went through: `gather` passed; `draft` failed its checks, was
 * repaired once, failed again and was replaced with its dependant `review` by revision 1 (`draft2`,
 * `review2`), which passed. The Goal Gradient Solver measured 0.60, 0.45, 0.45.
 */
export const FIRST_PLAN: PlanStep[] = [
  { id: 'gather', description: 'gather the figures', dependencies: [] },
  { id: 'draft', description: 'draft the table', dependencies: ['gather'], expected_output: 'a markdown table' },
  { id: 'review', description: 'review the table', dependencies: ['draft'] },
];
export const REPLACEMENTS: PlanStep[] = [
  { id: 'draft2', description: 'draft the table with a totals row', dependencies: ['gather'] },
  { id: 'review2', description: 'review the new table', dependencies: ['draft2'] },
];
export const REVISED_PLAN: PlanStep[] = [FIRST_PLAN[0] as PlanStep, ...REPLACEMENTS];

type Body = { [K in RunEvent['type']]: Omit<Extract<RunEvent, { type: K }>, 'runId' | 'seq' | 'ts'> }[RunEvent['type']];

const failedChecks = [
  { name: 'result exists', passed: true },
  { name: 'expected format', passed: false, detail: 'no markdown table' },
];

export function recoveredRunEvents(runId: string, goal: string): RunEvent[] {
  const bodies: Body[] = [
    { type: 'run.started', goal, policy: 'balanced', toolApproval: {} },
    { type: 'plan.ready', plan: { goal, steps: FIRST_PLAN } },
    { type: 'step.started', stepId: 'gather' },
    { type: 'validation.completed', stepId: 'gather', verdict: 'pass', gap: 0.1, confidence: 0.95, reasons: [], checks: [{ name: 'result exists', passed: true }] },
    { type: 'step.completed', stepId: 'gather', result: 'figures' },
    { type: 'step.started', stepId: 'draft' },
    { type: 'validation.completed', stepId: 'draft', verdict: 'fail', gap: 0.6, confidence: 0.8, reasons: ['The table has no totals row'], checks: failedChecks },
    { type: 'step.retried', stepId: 'draft', repair: 1, reason: 'The table has no totals row' },
    { type: 'validation.completed', stepId: 'draft', verdict: 'fail', gap: 0.55, confidence: 0.8, reasons: ['Still no totals row'], checks: failedChecks },
    { type: 'step.failed', stepId: 'draft', reason: 'Still no totals row' },
    { type: 'goal.progress', gap: 0.6, delta: null },
    { type: 'plan.revised', revision: 1, replaced: ['draft', 'review'], added: ['draft2', 'review2'], reason: 'Still no totals row', plan: { goal, steps: REVISED_PLAN } },
    { type: 'goal.progress', gap: 0.45, delta: -0.15 },
    { type: 'step.started', stepId: 'draft2' },
    { type: 'validation.completed', stepId: 'draft2', verdict: 'pass', gap: 0.05, confidence: 0.97, reasons: ['The totals row is there'], checks: [] },
    { type: 'step.completed', stepId: 'draft2', result: '| a | total |' },
    { type: 'step.started', stepId: 'review2' },
    { type: 'step.completed', stepId: 'review2', result: 'fine' },
    { type: 'goal.progress', gap: 0.45, delta: 0 },
  ];
  return bodies.map((body, index) => ({ ...body, runId, seq: index + 1, ts: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString() }) as RunEvent);
}
