import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArchonError } from '../../../src/shared/errors';
import { approveAll, denyAll, type ApprovalChannel } from '../../../src/core/approval/approval-channel';
import { planReply, toolMessagesOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';

const startEngine = useEngine();

/** One step that calls the calculator once: under strict, that call is put to the channel. */
function oneCall(request: RecordedRequest): ScriptedReply {
  if (request.purpose === 'plan') return planReply([{ id: 'sum', description: 'add two numbers' }]);
  if (request.purpose === 'step' && toolMessagesOf(request).length === 0) return { toolCalls: [{ name: 'calculator', arguments: { expression: '2+2' } }] };
  return { content: '4' };
}

/** A channel that answers by `rule` and fails the run if anything waits on it. */
function ruleOnly(rule: NonNullable<ApprovalChannel['rule']>): ApprovalChannel {
  return { canRaiseBudgets: false, rule, decide: () => Promise.reject(new Error('a channel that answers by rule was waited on')) };
}

describe('the approval gate', () => {
  it('a channel that answers by rule (--approve auto) is not waited on: each request is stored already answered, then announced asked and answered', async () => {
    const engine = await startEngine({ reply: oneCall }, { approvals: ruleOnly(approveAll.rule!) });
    const result = await engine.run('add', { policy: 'strict' });
    expect(result.status).toBe('completed');

    const rows = engine.runtime.store.db.prepare('SELECT id, kind, status, requested_at, decided_at FROM approvals WHERE run_id = ? ORDER BY rowid').all(result.runId) as { id: string; kind: string; status: string; requested_at: string; decided_at: string }[];
    expect(rows.map((row) => [row.kind, row.status])).toEqual([['plan', 'approved'], ['tool_call', 'approved'], ['final_answer', 'approved']]);
    for (const row of rows) expect(row.decided_at).toBe(row.requested_at);
    const announced = engine.events.flatMap((event) => (event.type === 'approval.requested' ? [`asked ${event.approvalId}`] : event.type === 'approval.resolved' ? [`${event.status} ${event.approvalId}`] : []));
    expect(announced).toEqual(rows.flatMap((row) => [`asked ${row.id}`, `approved ${row.id}`]));
  });

  it("a rule's no is stored and announced as the answer, and the call does not run", async () => {
    const noToolCalls = (request: Parameters<NonNullable<ApprovalChannel['rule']>>[0]) => (request.kind === 'tool_call' ? denyAll.rule!(request) : approveAll.rule!(request));
    const engine = await startEngine({ reply: oneCall }, { approvals: ruleOnly(noToolCalls) });
    const result = await engine.run('add', { policy: 'strict' });
    expect(result.status).toBe('completed');
    const rows = engine.runtime.store.db.prepare('SELECT kind, status FROM approvals WHERE run_id = ? ORDER BY rowid').all(result.runId);
    expect(rows).toEqual([{ kind: 'plan', status: 'approved' }, { kind: 'tool_call', status: 'rejected' }, { kind: 'final_answer', status: 'approved' }]);
    expect(engine.events.flatMap((event) => (event.type === 'approval.resolved' ? [event.status] : []))).toEqual(['approved', 'rejected', 'approved']);
    expect(engine.events.some((event) => event.type === 'tool.started')).toBe(false);
    expect(toolMessagesOf(engine.server.chatRequests.at(-2)!).join(' ')).toContain('--approve deny');
});

  it('a full disk as a rule answers: nothing of the request is stored or announced, the file is not written, and resume asks again and writes it once', async () => {
    const content = 'x'.repeat(20_000);
    const writeOnce = (request: RecordedRequest): ScriptedReply => {
      if (request.purpose === 'plan') return planReply([{ id: 'save', description: 'save the notes' }]);
      if (request.purpose === 'step' && toolMessagesOf(request).length === 0) return { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content } }] };
      return { content: 'saved' };
    };
    let filled = false;
    const fillOnToolCall: NonNullable<ApprovalChannel['rule']> = (request) => {
      if (request.kind === 'tool_call' && !filled) {
        filled = true;
        // The request carries 20 KB of arguments: storing it needs pages the disk no longer has.
        const db = engine.runtime.store.db;
        db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
      }
      return approveAll.rule!(request);
    };
    const engine = await startEngine({ reply: writeOnce }, { approvals: ruleOnly(fillOnToolCall) });
    const ended = await engine.run('save the notes', { policy: 'strict' }).catch((error: unknown) => error);
    // Paused with the advice, or, when not even the pause can be written, a typed DISK_FULL with the same advice.
    if (ArchonError.isInstance(ended)) expect(ended.code).toBe('DISK_FULL');
    else expect(ended).toMatchObject({ status: 'paused' });
    expect(ArchonError.isInstance(ended) ? ended.message : (ended as { error: string }).error).toMatch(/disk .* is full.*Free some space, then resume/s);
    const runId = engine.runtime.store.runs.listRuns(1)[0]?.id as string;
    const db = engine.runtime.store.db;
    const toolApprovals = () => db.prepare("SELECT status FROM approvals WHERE run_id = ? AND kind = 'tool_call'").all(runId);
    expect(toolApprovals()).toEqual([]);
    expect(engine.events.some((event) => event.type === 'approval.requested' && event.kind === 'tool_call')).toBe(false);
    expect(engine.events.some((event) => event.type === 'tool.started')).toBe(false);
    expect(existsSync(join(engine.workspace, 'notes.txt'))).toBe(false);

    db.pragma('max_page_count = 1073741823');
    expect(await engine.resume(runId)).toMatchObject({ status: 'completed' });
    expect(toolApprovals()).toEqual([{ status: 'approved' }]);
    expect(readFileSync(join(engine.workspace, 'notes.txt'), 'utf8')).toBe(content);
    expect(engine.events.filter((event) => event.type === 'tool.started')).toHaveLength(1);
  });
});
