import { describe, expect, it } from 'vitest';
import { ArchonEvents } from '../../src/auditor/archon-events';
import { createAuditKey, findAuditSecrets } from '../../src/auditor/audit-key';
import { AuditLog } from '../../src/auditor/audit-log';
import { buildReport } from '../../src/auditor/audit-report';
import type { AuditedEvent } from '../../src/auditor/detectors';
import { outcomeFindings } from '../../src/auditor/outcome-detectors';
import { createRuntime } from '../../src/core/runtime';
import type { ExplanationPacket } from '../../src/shared/schemas/approval';
import { RunEventSchema, type RunEvent } from '../../src/shared/schemas/events';
import type { CriterionOutcome, GoalContract } from '../../src/shared/schemas/goal-contract';
import { useTempDirs } from '../support/temp-dir';

const tempDir = useTempDirs();

type EventBody = RunEvent extends infer Event ? (Event extends RunEvent ? Omit<Event, 'runId' | 'seq' | 'ts'> : never) : never;

/** The events of one run as the auditor reads them: checked against the schema, numbered in order. */
function run(...bodies: EventBody[]): AuditedEvent[] {
  return bodies.map((body, index) => ({ seq: index + 1, event: RunEventSchema.parse({ ...body, runId: 'r', seq: index + 1, ts: new Date(Date.UTC(2026, 10, 27, 9, 0, index)).toISOString() }) }));
}

const started: EventBody = { type: 'run.started', goal: 'write the report', policy: 'balanced', toolApproval: {} };
const contract = (criteria: GoalContract['criteria'] = [
  { id: 'c1', text: 'report.md exists', source: 'goal', kind: 'file_written', path: 'report.md' },
  { id: 'c2', text: 'the answer names the total', source: 'model', kind: 'judged' },
]): EventBody => ({ type: 'contract.ready', by: 'archon', contract: { goal: 'write the report', criteria, deliverables: ['report.md'], constraints: [], outOfScope: [] } });
const met = (id: string, value: boolean | null): CriterionOutcome => ({ id, met: value, evidence: value ? [`${id} shown`] : [], detail: value === null ? 'the critic did not answer' : null });
const checked = (criteria: CriterionOutcome[], gaps: string[] = []): EventBody => ({
  type: 'outcome.checked',
  criteria,
  verdict: gaps.length > 0 ? 'fail' : 'pass',
  confidence: 0.9,
  gaps,
  route: gaps.length > 0 ? 'ask' : 'accept',
});
const completed = (gaps?: string[]): EventBody => ({ type: 'run.completed', answer: 'done', ...(gaps ? { gaps } : {}) });
const explanation: ExplanationPacket = { summary: '', confidence: 0.4, risk: { level: 'medium', factors: [] }, reversibility: 'not_applicable', cost: { tokensUsed: 0, tokensLeft: null, estimatedUsd: 0 }, downstream: [], alternatives: [] };
const askedOutcome = (approvalId = 'a1'): EventBody => ({ type: 'approval.requested', approvalId, kind: 'outcome', stepId: null, summary: 'accept the gaps?', action: { gaps: ['c2'] }, actionHash: 'h', expiresAt: null, explanation });
const answered = (verdict: 'approve' | 'reject', approvalId = 'a1'): EventBody =>
  verdict === 'approve'
    ? { type: 'approval.resolved', approvalId, status: 'approved', decision: { verdict: 'approve' }, decidedBy: 'operator', channel: 'terminal' }
    : { type: 'approval.resolved', approvalId, status: 'rejected', decision: { verdict: 'reject', feedback: 'no' }, decidedBy: 'operator', channel: 'terminal' };
const brief = (findings: { severity: string; title: string }[]) => findings.map(({ severity, title }) => ({ severity, title }));
const UNPROVEN = { severity: 'high', title: 'Run completed without evidence for its success criteria' };

describe('unproven completion', () => {
  it('a completion after an outcome check with every criterion met is no finding', () => {
    expect(outcomeFindings(run(started, contract(), checked([met('c1', true), met('c2', true)]), completed()))).toEqual([]);
    expect(outcomeFindings(run(started, contract(), checked([met('c1', true), met('c2', true)]), completed([])))).toEqual([]);
  });

  it('a completion with no outcome check after the contract is high, naming every criterion and citing the contract and the completion', () => {
    const findings = outcomeFindings(run(started, contract(), completed()));
    expect(findings).toEqual([
      {
        detector: 'outcome',
        ...UNPROVEN,
        explanation: 'The run completed as done, but no outcome check followed its contract. Criteria without evidence: c1 "report.md exists"; c2 "the answer names the total".',
        evidence: [{ record: 2, event: 'contract.ready', eventSeq: 2 }, { record: 3, event: 'run.completed', eventSeq: 3 }],
      },
    ]);
  });

  it('a check before the contract was stated again (the operator edited it) proves nothing', () => {
    const findings = outcomeFindings(run(started, contract(), checked([met('c1', true), met('c2', true)]), { ...contract(), by: 'operator' } as EventBody, completed()));
    expect(brief(findings)).toEqual([UNPROVEN]);
  });

  it('a criterion judged unmet, or missing from the check, is high and named; the others are not', () => {
    const unmet = outcomeFindings(run(started, contract(), checked([met('c1', true), met('c2', false)]), completed()));
    expect(unmet).toEqual([expect.objectContaining({ ...UNPROVEN, explanation: expect.stringMatching(/Criteria without evidence: c2 "the answer names the total"\.$/), evidence: [2, 3, 4].map((record) => expect.objectContaining({ record })) })]);
    const missing = outcomeFindings(run(started, contract(), checked([met('c2', true)]), completed()));
    expect(missing).toEqual([expect.objectContaining({ ...UNPROVEN, explanation: expect.stringMatching(/Criteria without evidence: c1 "report.md exists"\.$/) })]);
  });

  it('a check that named gaps is high even when every criterion it lists is met', () => {
    const findings = outcomeFindings(run(started, contract(), checked([met('c1', true), met('c2', true)], ['the total is unsure']), completed()));
    expect(findings).toEqual([expect.objectContaining({ ...UNPROVEN, explanation: 'The run completed as done, but its outcome check named gaps (the total is unsure).' })]);
  });

  it('a criterion the check could not judge is medium, naming it; not unproven', () => {
    const findings = outcomeFindings(run(started, contract(), checked([met('c1', true), met('c2', null)]), completed()));
    expect(findings).toEqual([
      expect.objectContaining({ detector: 'outcome', severity: 'medium', title: 'Success criterion c2 could not be judged', explanation: 'The outcome check could not tell whether c2 "the answer names the total" held (the critic did not answer), yet the run completed as done.' }),
    ]);
  });

  it('a run without a contract, or whose contract has no criteria, has nothing to prove', () => {
    expect(outcomeFindings(run(started, completed()))).toEqual([]);
    expect(outcomeFindings(run(started, contract([]), completed()))).toEqual([]);
  });
});

describe('completed with gaps', () => {
  it('after an approved outcome approval: a low note listing the accepted gaps, citing the answer', () => {
    const findings = outcomeFindings(run(started, contract(), checked([met('c1', true), met('c2', false)], ['c2: the total is missing']), askedOutcome(), answered('approve'), completed(['c2: the total is missing'])));
    expect(findings).toEqual([
      {
        detector: 'outcome',
        severity: 'low',
        title: 'Run completed with 1 accepted gap(s)',
        explanation: 'What the run did not do, accepted as gaps: c2: the total is missing.',
        evidence: [{ record: 5, event: 'approval.resolved', eventSeq: 5 }, { record: 6, event: 'run.completed', eventSeq: 6 }],
      },
    ]);
  });

  it('without the operator’s word (none asked, one rejected, one of another kind, or one given before the last check) it is high', () => {
    const gapsFrom = (...between: EventBody[]) => brief(outcomeFindings(run(started, contract(), checked([met('c2', false)], ['c2']), ...between, completed(['c2']))));
    const unapproved = [
      { severity: 'low', title: 'Run completed with 1 accepted gap(s)' },
      { severity: 'high', title: "Gaps were accepted without the operator's word" },
    ];
    expect(gapsFrom()).toEqual(unapproved);
    expect(gapsFrom(askedOutcome(), answered('reject'))).toEqual(unapproved);
    expect(gapsFrom({ ...askedOutcome(), kind: 'escalation' } as EventBody, answered('approve'))).toEqual(unapproved);
    expect(gapsFrom(askedOutcome(), answered('approve'), checked([met('c2', false)], ['c2']))).toEqual(unapproved);
    expect(gapsFrom(askedOutcome(), answered('approve'))).toEqual([unapproved[0]]);
  });

  it('the report ranks the missing word high, says completed_with_gaps and reads every new event and approval kind', () => {
    const dataDir = tempDir();
    const log = AuditLog.open(dataDir, createAuditKey(findAuditSecrets(dataDir)));
    const events = run(started, contract(), checked([met('c2', false)], ['c2']), askedOutcome(), answered('approve'), completed(['c2'])).map(({ event }) => ({ runId: event.runId, eventSeq: event.seq, type: event.type, ts: event.ts, body: event }));
    log.append(events);
    const report = buildReport(log, { runId: 'r' });
    log.close();
    expect(report.runs).toEqual([expect.objectContaining({ status: 'completed_with_gaps', approvals: expect.objectContaining({ asked: 1, answers: { approved: 1 } }) })]);
    expect(brief(report.findings)).toEqual([{ severity: 'low', title: 'Run completed with 1 accepted gap(s)' }]);
  });
});

describe('the runs the auditor polls', () => {
  it('a run ended completed_with_gaps writes no more events; a paused one may', () => {
    const dataDir = tempDir();
    const runtime = createRuntime({ dataDir });
    const options = { modelUrl: 'http://127.0.0.1:9/v1', model: 'm', policy: 'balanced', concurrency: 1, maxTokens: null, maxCostUsd: null, workspace: dataDir, maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 } as const;
    const now = new Date().toISOString();
    for (const [id, status] of [['gaps', 'completed_with_gaps'], ['paused', 'paused'], ['done', 'completed']] as const) {
      runtime.store.runs.createRun({ id, goal: 'g', policy: 'balanced', options, now });
      runtime.store.runs.setRunStatus(id, status, now);
    }
    runtime.close();
    const events = new ArchonEvents(dataDir);
    expect(events.unfinishedRuns()).toEqual(['paused']);
    events.close();
  });
});
