import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createAuditKey, findAuditSecrets } from '../../src/auditor/audit-key';
import { AUDIT_DB_FILE, AuditLog } from '../../src/auditor/audit-log';
import { buildReport } from '../../src/auditor/audit-report';
import { renderAuditMarkdown } from '../../src/shared/audit-markdown';
import type { AuditReport } from '../../src/shared/schemas/audit';
import type { ExplanationPacket } from '../../src/shared/schemas/approval';
import type { RunEvent } from '../../src/shared/schemas/events';
import { planReply, startModelServer, type ScriptedModelServer } from '../kit/scripted-model-server';
import { spawnArchon } from '../support/archon-process';
import { PROJECT_ROOT } from '../support/built';
import { useEngine } from '../support/engine';
import { useTempDirs } from '../support/temp-dir';

const tempDir = useTempDirs();
const startEngine = useEngine();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type EventBody = RunEvent extends infer Event ? (Event extends RunEvent ? Omit<Event, 'runId' | 'seq' | 'ts'> : never) : never;

/** The report on run `injected`; an event may name another run (a sub-agent's) as `[runId, event]`. */
function injected(events: (EventBody | [string, EventBody])[]): AuditReport {
  const dataDir = tempDir();
  const log = AuditLog.open(dataDir, createAuditKey(findAuditSecrets(dataDir)));
  const seqs = new Map<string, number>();
  log.append(
    events.map((item, index) => {
      const [runId, body] = Array.isArray(item) ? item : ['injected', item];
      seqs.set(runId, (seqs.get(runId) ?? 0) + 1);
      const event = { ...body, runId, seq: seqs.get(runId) ?? 1, ts: new Date(Date.UTC(2026, 10, 21, 9, 0, index)).toISOString() } as RunEvent;
      return { runId: event.runId, eventSeq: event.seq, type: event.type, ts: event.ts, body: event };
    }),
  );
  const report = buildReport(log, { runId: 'injected' });
  log.close();
  return report;
}

const started = { type: 'run.started', goal: 'g', policy: 'balanced', toolApproval: {} } as const;
const explanation: ExplanationPacket = { summary: '', confidence: null, risk: { level: 'medium', factors: [] }, reversibility: 'reversible', cost: { tokensUsed: 0, tokensLeft: null, estimatedUsd: 0 }, downstream: [], alternatives: [] };

describe('the auditor’s detectors and reports', () => {
  it('finds a boundary violation in an injected action that lacks the approval its policy required', () => {
    const report = injected([started, { type: 'tool.started', stepId: 's', tool: 'write_file', callId: 'c1', args: { path: 'x', content: 'y' } }]);
    expect(report.findings).toContainEqual(expect.objectContaining({ detector: 'boundary', severity: 'high', title: 'write_file ran without the approval its policy required', evidence: [expect.objectContaining({ record: 2, event: 'tool.started' })] }));
  });

  it('a call the operator rejected never started: tool.refused with the reason, no tool.started, and no missing-approval finding', async () => {
    const engine = await startEngine(
      {
        reply: (request) => {
          if (request.purpose === 'plan') return planReply([{ id: 'c', description: 'run a command' }]);
          if (request.purpose === 'final') return { content: 'could not run it' };
          return request.body.messages?.some((message) => message.role === 'tool') ? { content: 'the operator said no' } : { toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi' } }] };
        },
      },
      { approvals: { canRaiseBudgets: false, decide: async (request) => (request.kind === 'tool_call' ? { verdict: 'reject', feedback: 'not now' } : { verdict: 'approve' }) } },
    );
    expect((await engine.run('refused command')).status).toBe('completed');
    const refused = engine.events.find((event) => event.type === 'tool.refused');
    expect(refused).toMatchObject({ tool: 'run_command', by: 'operator', reason: expect.stringContaining('not now') });
    const callId = (refused as Extract<RunEvent, { type: 'tool.refused' }>).callId;
    expect(engine.events.filter((event) => (event.type === 'tool.started' || event.type === 'tool.completed') && event.callId === callId)).toEqual([]);
    const report = injected(engine.events.map(({ runId: _runId, seq: _seq, ts: _ts, ...body }) => body as EventBody));
    expect(report.findings.filter((finding) => finding.detector === 'boundary')).toEqual([]);
  });

  it('flags every attempt a tool refused, citing the refusal', () => {
    const report = injected([started, { type: 'tool.refused', stepId: 's', tool: 'read_file', callId: 'c1', reason: '"../x" is outside the workspace.' }]);
    expect(report.findings).toContainEqual(expect.objectContaining({ detector: 'boundary', severity: 'medium', title: 'read_file refused an attempt to cross the sandbox', evidence: [expect.objectContaining({ record: 2, event: 'tool.refused' })] }));
  });

  it('finds nothing when the same action was approved first, or needed no approval', () => {
    const report = injected([
      started,
      { type: 'approval.requested', approvalId: 'a1', kind: 'tool_call', stepId: 's', summary: '', action: { tool: 'write_file', args: {} }, actionHash: 'h', expiresAt: null, explanation },
      { type: 'approval.resolved', approvalId: 'a1', status: 'approved', decision: { verdict: 'approve' } },
      { type: 'tool.started', stepId: 's', tool: 'write_file', callId: 'c1', args: {} },
      { type: 'tool.started', stepId: 's', tool: 'read_file', callId: 'c2', args: { path: 'x' } },
    ]);
    expect(report.findings.filter((finding) => finding.detector === 'boundary')).toEqual([]);
  });

  it('counts who decided each answer: a rule, the operator on a channel, no one in time; an older run\'s answer as unrecorded', () => {
    const asked = (approvalId: string) => ({ type: 'approval.requested', approvalId, kind: 'plan', stepId: null, summary: '', action: {}, actionHash: 'h', expiresAt: null, explanation }) as const;
    const report = injected([
      started,
      asked('a1'),
      { type: 'approval.resolved', approvalId: 'a1', status: 'approved', decision: { verdict: 'approve' }, decidedBy: 'rule' },
      asked('a2'),
      { type: 'approval.resolved', approvalId: 'a2', status: 'rejected', decision: { verdict: 'reject', feedback: 'no' }, decidedBy: 'operator', channel: 'app' },
      asked('a3'),
      { type: 'approval.resolved', approvalId: 'a3', status: 'expired', decision: { verdict: 'reject', feedback: 'late' }, decidedBy: 'expiry' },
      asked('a4'),
      { type: 'approval.resolved', approvalId: 'a4', status: 'approved', decision: { verdict: 'approve' } },
    ]);
    expect(report.runs[0]?.approvals).toEqual({ asked: 4, answers: { approved: 2, rejected: 1, expired: 1 }, decidedBy: { rule: 1, 'operator:app': 1, expiry: 1, unrecorded: 1 } });
    expect(renderAuditMarkdown(report)).toContain('- Decided by: rule ×1, operator:app ×1, expiry ×1, unrecorded ×1');
  });

  it('judges an MCP tool by the side effects it declared and by its server’s SERVER__* setting', () => {
    const report = injected([
      { ...started, toolApproval: { 'quiet__*': 'never' } },
      { type: 'tool.started', stepId: 's', tool: 'everything__get-sum', callId: 'c1', args: {}, sideEffects: 'none' },
      { type: 'tool.started', stepId: 's', tool: 'quiet__erase', callId: 'c2', args: {}, sideEffects: 'irreversible' },
      { type: 'tool.started', stepId: 's', tool: 'fs__write_file', callId: 'c3', args: {}, sideEffects: 'irreversible' },
    ]);
    expect(report.findings.filter((finding) => finding.detector === 'boundary').map((finding) => finding.title)).toEqual(['fs__write_file ran without the approval its policy required']);
  });

  it('flags an effector addressing another effector on the bus, and not the coordinator handing a step over', () => {
    const envelope = { correlationId: 'c', kind: 'task', body: 'do it' } as const;
    const report = injected([
      started,
      { type: 'bus.message', ...envelope, id: 'm1', from: 'coordinator', to: 'executor:a', topic: 'agent:executor:a' },
      { type: 'bus.message', ...envelope, id: 'm2', from: 'executor:a', to: 'researcher:b', topic: 'agent:researcher:b' },
      { type: 'bus.message', ...envelope, id: 'm3', from: 'executor:a', to: 'subagent:child', topic: 'agent:subagent:child' },
    ]);
    expect(report.findings).toEqual([
      expect.objectContaining({ detector: 'boundary', severity: 'high', title: 'executor:a addressed researcher:b directly', evidence: [expect.objectContaining({ record: 3, event: 'bus.message' })] }),
    ]);
  });

  it("reads a parent's sub-agents' bus messages too: their agents in the report, an effector addressing another in a child flagged", () => {
    const envelope = { correlationId: 'c', kind: 'task', body: 'do it' } as const;
    const report = injected([
      started,
      { type: 'subagent.started', stepId: 'research', childRunId: 'child', goal: 'sub-goal', role: null, depth: 1 },
      ['child', { ...started, goal: 'sub-goal', parentRunId: 'injected', parentStepId: 'research' }],
      ['child', { type: 'bus.message', ...envelope, id: 'm1', from: 'coordinator', to: 'executor:a', topic: 'agent:executor:a' }],
      ['child', { type: 'bus.message', ...envelope, id: 'm2', from: 'executor:a', to: 'researcher:b', topic: 'agent:researcher:b' }],
    ]);
    expect(report.runs.map((run) => run.runId)).toEqual(['injected', 'child']);
    expect(report.runs[1]?.agents).toMatchObject({ coordinator: { sent: { task: 1 } }, 'executor:a': { received: { task: 1 }, sent: { task: 1 } }, 'researcher:b': { received: { task: 1 } } });
    expect(report.findings).toEqual([
      expect.objectContaining({ detector: 'spawn', severity: 'info', title: 'Step research spawned a sub-agent (depth 1)' }),
      expect.objectContaining({ detector: 'boundary', title: 'executor:a addressed researcher:b directly', evidence: [expect.objectContaining({ record: 5, event: 'bus.message' })] }),
    ]);
  });

  it('a tool a sub-agent (or its own sub-agent) started after a run above it locked the tool is high, citing the lock and the call; one started before is not', () => {
    const command = (callId: string) => ({ type: 'tool.started', stepId: 'cmd', tool: 'run_command', callId, args: { command: 'touch marker' } }) as const;
    const locked = (findings: AuditReport['findings']) => findings.filter((finding) => finding.title.includes('locked'));
    const report = injected([
      started,
      { type: 'subagent.started', stepId: 'research', childRunId: 'child', goal: 'sub-goal', role: null, depth: 1 },
      ['child', { ...started, goal: 'sub-goal', parentRunId: 'injected', parentStepId: 'research' }],
      ['child', command('before')],
      { type: 'constraint.locked', constraint: { kind: 'never_tool', tool: 'run_command' } },
      ['child', command('after')],
      ['child', { type: 'subagent.started', stepId: 'cmd', childRunId: 'grandchild', goal: 'sub-sub-goal', role: null, depth: 2 }],
      ['grandchild', { ...started, goal: 'sub-sub-goal', parentRunId: 'child', parentStepId: 'cmd' }],
      ['grandchild', command('deeper')],
    ]);
    const lock = expect.objectContaining({ record: 5, event: 'constraint.locked' });
    expect(locked(report.findings)).toEqual([
      expect.objectContaining({ detector: 'boundary', severity: 'high', title: 'run_command ran in a sub-agent after it was locked above it', explanation: expect.stringContaining('sub-agent run child'), evidence: [lock, expect.objectContaining({ record: 6, event: 'tool.started' })] }),
      expect.objectContaining({ detector: 'boundary', severity: 'high', title: 'run_command ran in a sub-agent after it was locked above it', explanation: expect.stringContaining('sub-agent run grandchild'), evidence: [lock, expect.objectContaining({ record: 9, event: 'tool.started' })] }),
    ]);
  });

  it("lists the run's agents and their messages per kind (built CLI, scripted server)", async () => {
    server = await startModelServer({
      reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'say hi' }, { id: 'b', description: 'say bye', dependencies: ['a'] }]) : { content: 'ok' }),
    });
    const dataDir = tempDir();
    const run = await spawnArchon(['run', 'greet', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--json']).done;
    expect(run.status).toBe(0);
    const runId = (JSON.parse(run.stdout.split('\n')[0] as string) as RunEvent).runId;
    const report = JSON.parse((await spawnArchon(['audit', 'report', runId, '--data-dir', dataDir, '--json']).done).stdout) as AuditReport;
    expect(report.runs[0]?.agents).toEqual({
      coordinator: { sent: { task: 3 }, received: { result: 3, critique: 2 } },
      planner: { sent: { result: 1 }, received: { task: 1 } },
      'executor:a': { sent: { result: 1 }, received: { task: 1 } },
      'executor:b': { sent: { result: 1 }, received: { task: 1 } },
      critic: { sent: { critique: 2 }, received: {} },
    });
    expect(report.findings.filter((finding) => finding.detector === 'boundary')).toEqual([]);
    const markdown = (await spawnArchon(['audit', 'report', runId, '--data-dir', dataDir]).done).stdout;
    expect(markdown).toContain('- Agents on the bus: 5');
    expect(markdown).toContain('  - coordinator: sent task ×3; received result ×3, critique ×2');
  });

  it('reports a run whose model repeats the same call with a convergence finding citing the repeated calls', async () => {
    server = await startModelServer({
      reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'spin', description: 'spin' }]) : { toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] }),
    });
    const dataDir = tempDir();
    const run = await spawnArchon(['run', 'loop', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--json']).done;
    expect(run.status).toBe(1);
    const runId = (JSON.parse(run.stdout.split('\n')[0] as string) as RunEvent).runId;
    const result = await spawnArchon(['audit', 'report', runId, '--data-dir', dataDir, '--json']).done;
    const report = JSON.parse(result.stdout) as AuditReport;
    const convergence = report.findings.find((finding) => finding.detector === 'convergence' && finding.severity === 'high');
    expect(convergence?.title).toBe('Step spin repeated the same action');
    expect(convergence?.evidence.filter((evidence) => evidence.event === 'tool.started')).toHaveLength(2);
    expect(convergence?.evidence.at(-1)?.event).toBe('step.failed');
    expect(report.runs[0]).toMatchObject({ runId, status: 'failed', toolCalls: { calculator: 2 } });
    const markdown = await spawnArchon(['audit', 'report', runId, '--data-dir', dataDir]).done;
    expect(markdown.stdout).toMatch(/^# Audit report — run /);
    expect(markdown.stdout).toContain('### [high] Step spin repeated the same action');
  });

  it('leaves an audit record for every model call, tool call, approval request and decision, state change and stop', async () => {
    let stepTurn = 0;
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'w', description: 'write then compute' }]);
        if (request.purpose === 'final') return { content: 'done' };
        stepTurn++;
        if (stepTurn === 1) return { status: 500 };
        if (stepTurn === 2) return { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }, { name: 'calculator', arguments: { expression: '1+2' } }] };
        return { content: 'written' };
      },
    });
    const dataDir = tempDir();
    const run = await spawnArchon(['run', 'audited', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto']).done;
    expect(run.status, run.stderr).toBe(0);
    await spawnArchon(['estop', '--data-dir', dataDir]).done;

    const archon = new Database(join(dataDir, 'archon.db'), { readonly: true });
    const audit = new Database(join(dataDir, AUDIT_DB_FILE), { readonly: true });
    const runEvents = archon.prepare('SELECT run_id, seq, type FROM events ORDER BY run_id, seq').all();
    const audited = audit.prepare('SELECT run_id, event_seq AS seq, type FROM records WHERE run_id IS NOT NULL ORDER BY run_id, seq').all();
    expect(audited).toEqual(runEvents);
    const count = (db: Database.Database, sql: string) => (db.prepare(sql).get() as { n: number }).n;
    expect(count(archon, 'SELECT count(*) AS n FROM model_calls')).toBe(count(audit, "SELECT count(*) AS n FROM records WHERE type IN ('model.completed', 'model.attempt_failed')"));
    expect(count(archon, 'SELECT count(*) AS n FROM tool_calls')).toBe(count(audit, "SELECT count(*) AS n FROM records WHERE type = 'tool.completed'"));
    expect(count(archon, 'SELECT count(*) AS n FROM approvals')).toBe(count(audit, "SELECT count(*) AS n FROM records WHERE type = 'approval.resolved'"));
    expect(count(audit, "SELECT count(*) AS n FROM records WHERE type IN ('step.started', 'step.completed', 'plan.ready', 'run.started', 'run.completed')")).toBe(5);
    expect(count(audit, "SELECT count(*) AS n FROM records WHERE type = 'system.estop'")).toBe(1);
    archon.close();
    audit.close();
  });

  it('renders a day report', () => {
    const report = injected([started, { type: 'estop.triggered', triggeredBy: 'cli', reason: 'test' }, { type: 'run.stopped', reason: 'stopped' }]);
    expect(renderAuditMarkdown(report)).toContain('### [high] Emergency stop (cli)');
  });
});

describe('the auditor’s independence', () => {
  function sources(dir: string): string[] {
    return readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? sources(path) : [path];
    });
  }

  it('no runtime, tool-process or UI code names audit.db or imports the auditor', () => {
    const offenders = sources(join(PROJECT_ROOT, 'src'))
      .map((path) => relative(PROJECT_ROOT, path))
      .filter((path) => !/^src\/(auditor|hosts|main)\//.test(path))
      .filter((path) => /audit\.db|AUDIT_DB_FILE|auditor\//.test(readFileSync(join(PROJECT_ROOT, path), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('a run driven by the runtime alone never creates or touches audit.db', async () => {
    const engine = await startEngine({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'x' }]) : { content: 'ok' }) });
    expect((await engine.run('no auditor here')).status).toBe('completed');
    expect(existsSync(join(engine.runtime.dataDir, 'archon.db'))).toBe(true);
    expect(existsSync(join(engine.runtime.dataDir, AUDIT_DB_FILE))).toBe(false);
  });
});
