import { describe, expect, it } from 'vitest';
import { escalationFindings, replanFindings, roleDriftFindings, spawnFindings } from '../../src/auditor/course-detectors';
import { boundaryViolations, convergenceFailures, DEFAULT_THRESHOLDS, type AuditedEvent } from '../../src/auditor/detectors';
import type { ExplanationPacket } from '../../src/shared/schemas/approval';
import { RunEventSchema, type RunEvent } from '../../src/shared/schemas/events';
import type { Plan } from '../../src/shared/schemas/plan';

type EventBody = RunEvent extends infer Event ? (Event extends RunEvent ? Omit<Event, 'runId' | 'seq' | 'ts'> : never) : never;

/** The events of one run as the auditor reads them: checked against the schema, numbered in order. */
function run(...bodies: EventBody[]): AuditedEvent[] {
  return bodies.map((body, index) => ({ seq: index + 1, event: RunEventSchema.parse({ ...body, runId: 'r', seq: index + 1, ts: new Date(Date.UTC(2026, 10, 27, 9, 0, index)).toISOString() }) }));
}

const started = (policy: 'balanced' | 'strict' = 'balanced', maxReplans?: number): EventBody => ({ type: 'run.started', goal: 'g', policy, toolApproval: {}, ...(maxReplans === undefined ? {} : { maxReplans }) });
const reader: EventBody = { type: 'step.started', stepId: 'look', role: 'reader', roleTools: ['read_file'] };
const explanation: ExplanationPacket = { summary: '', confidence: null, risk: { level: 'medium', factors: [] }, reversibility: 'not_applicable', cost: { tokensUsed: 0, tokensLeft: null, estimatedUsd: 0 }, downstream: [], alternatives: [] };
const plan: Plan = { goal: 'g', steps: [{ id: 'b2', description: 'another way', dependencies: [] }] };
const revised = (revision: number): EventBody => ({ type: 'plan.revised', revision, replaced: [`b${revision}`], added: [`b${revision + 1}`], reason: `Step b${revision} failed: no data`, plan });
const severities = (findings: { severity: string }[]) => findings.map((finding) => finding.severity);

describe('role drift', () => {
  it('a call that ran outside its step’s role is high, citing the step’s role and the call', () => {
    const findings = roleDriftFindings(run(started(), reader, { type: 'tool.started', stepId: 'look', tool: 'run_command', callId: 'c1', args: { command: 'ls' } }));
    expect(findings).toEqual([
      expect.objectContaining({ detector: 'role', severity: 'high', title: 'run_command ran outside the role reader', evidence: [expect.objectContaining({ record: 2, event: 'step.started' }), expect.objectContaining({ record: 3, event: 'tool.started' })] }),
    ]);
  });

  it('a tool the model only asked for, refused for the role, is low: one finding per step and tool, with the model’s reply and the refusal', () => {
    const findings = roleDriftFindings(
      run(
        started(),
        reader,
        { type: 'model.completed', stepId: 'look', purpose: 'step', content: '', toolCalls: ['calculator'], promptTokens: 1, completionTokens: 1, attempts: 1 },
        { type: 'tool.refused', stepId: 'look', tool: 'calculator', callId: 'c1', reason: 'The role "reader" may not use calculator', by: 'archon', code: 'not_allowed_for_role' },
        { type: 'tool.started', stepId: 'look', tool: 'read_file', callId: 'c2', args: { path: 'notes.txt' } },
      ),
    );
    expect(findings).toEqual([
      expect.objectContaining({ severity: 'low', title: "Step look's model asked for calculator, outside the role reader", evidence: [2, 3, 4].map((record) => expect.objectContaining({ record })) }),
    ]);
  });

  it('a role with every tool, and a step that names no role (an older run), cannot drift', () => {
    const call = { type: 'tool.started', stepId: 's', tool: 'run_command', callId: 'c1', args: {} } as const;
    expect(roleDriftFindings(run(started(), { type: 'step.started', stepId: 's', role: 'executor', roleTools: 'all' }, call))).toEqual([]);
    expect(roleDriftFindings(run(started(), { type: 'step.started', stepId: 's' }, call))).toEqual([]);
  });
});

describe('re-plans', () => {
  it('each re-plan is information, with what it replaced and why', () => {
    expect(replanFindings(run(started('balanced', 3), revised(1)))).toEqual([
      { detector: 'replan', severity: 'info', title: 'Re-plan 1: b1 replaced by b2', explanation: 'Step b1 failed: no data', evidence: [{ record: 2, event: 'plan.revised', eventSeq: 2 }] },
    ]);
  });

  it('using every re-plan the run allows is low; more than its cap is high', () => {
    expect(severities(replanFindings(run(started('balanced', 2), revised(1), revised(2))))).toEqual(['info', 'info', 'low']);
    const over = replanFindings(run(started('balanced', 1), revised(1), revised(2)));
    expect(over.at(-1)).toMatchObject({ severity: 'high', title: "2 re-plans, past the run's cap of 1", evidence: [{ record: 2 }, { record: 3 }] });
  });

  it('a run that names no cap (an older run) gets information only', () => {
    expect(severities(replanFindings(run(started(), revised(1), revised(2), revised(3), revised(4))))).toEqual(['info', 'info', 'info', 'info']);
  });
});

describe('escalations', () => {
  it('a step put to the operator is low, with why and the operator’s answer cited', () => {
    const findings = escalationFindings(
      run(
        started(),
        { type: 'escalation.raised', stepId: 'b', approvalId: 'a1', reason: 'the run has used its 3 re-plan(s)', gapTrend: [1, 1] },
        { type: 'approval.requested', approvalId: 'a1', kind: 'escalation', stepId: 'b', summary: '', action: {}, actionHash: 'h', expiresAt: null, explanation },
        { type: 'approval.resolved', approvalId: 'a1', status: 'edited', decision: { verdict: 'edit', edited: { choice: 'skip' } } },
      ),
    );
    expect(findings).toEqual([
      { detector: 'escalation', severity: 'low', title: 'Step b was escalated to the operator', explanation: 'the run has used its 3 re-plan(s). The answer: edited ({"choice":"skip"}).', evidence: [expect.objectContaining({ record: 2 }), expect.objectContaining({ record: 4 })] },
    ]);
  });

  it('an escalation no one answered says so', () => {
    const [finding] = escalationFindings(run(started(), { type: 'escalation.raised', stepId: 'b', approvalId: 'a1', reason: 'stuck', gapTrend: [] }));
    expect(finding?.explanation).toBe('stuck. No answer is recorded.');
  });
});

describe('sub-agent spawns', () => {
  const spawn = (depth: number): EventBody => ({ type: 'subagent.started', stepId: 'research', childRunId: 'child', goal: 'find out', role: null, depth });
  const asked: EventBody = { type: 'approval.requested', approvalId: 'a1', kind: 'subagent_spawn', stepId: 'research', summary: '', action: {}, actionHash: 'h', expiresAt: null, explanation };

  it('a spawn is information where the policy does not ask', () => {
    expect(spawnFindings(run(started('balanced'), spawn(1)))).toEqual([
      { detector: 'spawn', severity: 'info', title: 'Step research spawned a sub-agent (depth 1)', explanation: 'Run child: find out', evidence: [{ record: 2, event: 'subagent.started', eventSeq: 2 }] },
    ]);
  });

  it('under strict a spawn needs an approval before it: without one it is high; approved, information', () => {
    const unapproved = spawnFindings(run(started('strict'), spawn(1)));
    expect(unapproved.map(({ severity, title }) => ({ severity, title }))).toEqual([
      { severity: 'info', title: 'Step research spawned a sub-agent (depth 1)' },
      { severity: 'high', title: 'Step research spawned a sub-agent without the approval its policy required' },
    ]);
    const rejectedThenSpawned = spawnFindings(run(started('strict'), asked, { type: 'approval.resolved', approvalId: 'a1', status: 'rejected', decision: { verdict: 'reject', feedback: 'no' } }, spawn(1)));
    expect(severities(rejectedThenSpawned)).toEqual(['info', 'high']);
    const approved = spawnFindings(run(started('strict'), asked, { type: 'approval.resolved', approvalId: 'a1', status: 'approved', decision: { verdict: 'approve' } }, spawn(1)));
    expect(severities(approved)).toEqual(['info']);
  });

  it('a policy tightened to strict during the run asks for the spawns after it', () => {
    expect(severities(spawnFindings(run(started('balanced'), { type: 'policy.tightened', from: 'balanced', to: 'strict', reasons: ['risk'] }, spawn(1))))).toEqual(['info', 'high']);
  });

  it('a sub-agent deeper than sub-agents may nest is high', () => {
    expect(spawnFindings(run(started(), spawn(3))).find((finding) => finding.severity === 'high')).toMatchObject({ title: 'A sub-agent at depth 3, past the limit of 2' });
  });
});

describe('only calls that started are held against the run', () => {
  it('a call refused before it started is no sandbox crossing and needs no approval; a tool’s own refusal is', () => {
    const findings = boundaryViolations(
      run(
        started(),
        { type: 'tool.refused', stepId: 's', tool: 'no_such_tool', callId: 'c1', reason: 'Unknown tool', by: 'archon', code: 'unknown_tool' },
        { type: 'tool.refused', stepId: 's', tool: 'write_file', callId: 'c2', reason: 'Denied', by: 'rule', code: 'rejected' },
        { type: 'tool.started', stepId: 's', tool: 'read_file', callId: 'c3', args: { path: '../x' } },
        { type: 'tool.refused', stepId: 's', tool: 'read_file', callId: 'c3', reason: 'outside the workspace', by: 'tool', code: 'outside_bounds' },
      ),
    );
    expect(findings.map(({ severity, title }) => ({ severity, title }))).toEqual([{ severity: 'medium', title: 'read_file refused an attempt to cross the sandbox' }]);
  });

  it('an interrupted call run again on resume is covered by the approval it started with, or by an approved repeat', () => {
    const write = (callId: string): EventBody => ({ type: 'tool.started', stepId: 's', tool: 'write_file', callId, args: { path: 'a', content: 'b' }, sideEffects: 'reversible' });
    const approval = (approvalId: string, kind: 'tool_call' | 'uncertain_repeat'): EventBody[] => [
      { type: 'approval.requested', approvalId, kind, stepId: 's', summary: '', action: { tool: 'write_file', args: {} }, actionHash: 'h', expiresAt: null, explanation },
      { type: 'approval.resolved', approvalId, status: 'approved', decision: { verdict: 'approve' } },
    ];
    expect(boundaryViolations(run(started(), ...approval('a1', 'tool_call'), write('c1'), { type: 'run.resumed', completedSteps: [] }, write('c1')))).toEqual([]);
    expect(boundaryViolations(run(started(), ...approval('a1', 'tool_call'), write('c1'), ...approval('a2', 'uncertain_repeat'), write('c1')))).toEqual([]);
    expect(severities(boundaryViolations(run(started(), ...approval('a1', 'tool_call'), write('c1'), write('c2'))))).toEqual(['high']);
  });

  it('a step that looped on calls that were all refused is a medium finding, not high', () => {
    const refusedCall = (callId: string): EventBody => ({ type: 'tool.refused', stepId: 's', tool: 'no_such_tool', callId, reason: 'Unknown tool', by: 'archon', code: 'unknown_tool' });
    const findings = convergenceFailures(run(started(), refusedCall('c1'), refusedCall('c2'), { type: 'step.failed', stepId: 's', reason: 'loop_detected: no_such_tool was called 3 times with the same arguments.' }), DEFAULT_THRESHOLDS);
    expect(findings).toEqual([expect.objectContaining({ severity: 'medium', title: 'Step s repeated the same action', evidence: [2, 3, 4].map((record) => expect.objectContaining({ record })) })]);
  });
});
