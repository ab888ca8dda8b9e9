import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StepConversation } from '../../../src/core/run/step-conversation';
import type { ApprovalChannel } from '../../../src/core/approval/approval-channel';
import { toolResult } from '../../../src/core/tools/tool-registry';
import type { ApprovalDecision, ApprovalRequest } from '../../../src/shared/schemas/approval';
import { ArchonError } from '../../../src/shared/errors';
import type { RunEvent } from '../../../src/shared/schemas/events';
import { planReply, toolMessagesOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';

const startEngine = useEngine();

const write = (name: string): ScriptedReply => ({ toolCalls: [{ name: 'write_file', arguments: { path: `${name}.txt`, content: name } }] });

/** One step whose model makes `turns` in order, then answers. */
function oneStep(turns: ScriptedReply[]) {
  return {
    reply: (request: RecordedRequest) => {
      if (request.purpose === 'plan') return planReply([{ id: 'w', description: 'write files' }]);
      if (request.purpose !== 'step') return { content: 'Nothing was written.' };
      return turns[toolMessagesOf(request).length] ?? { content: 'Nothing was written.' };
    },
  };
}

const refusals = (events: RunEvent[]) => events.flatMap((event) => (event.type === 'tool.refused' ? [{ tool: event.tool, by: event.by, code: event.code }] : []));
const startedTools = (events: RunEvent[]) => events.flatMap((event) => (event.type === 'tool.started' ? [event.tool] : []));

describe('tool calls that never start', () => {
  it('a call a rule rejects (as `--approve deny` does) is refused by the rule, never started, and the model is told', async () => {
    const rule = (request: ApprovalRequest): ApprovalDecision => (request.kind === 'tool_call' ? { verdict: 'reject', feedback: 'Denied by rule.' } : { verdict: 'approve' });
    const approvals: ApprovalChannel = { canRaiseBudgets: false, rule, decide: async (request) => rule(request) };
    const engine = await startEngine(oneStep([write('a')]), { approvals });
    expect((await engine.run('write a')).status).toBe('completed');
    expect(refusals(engine.events)).toEqual([{ tool: 'write_file', by: 'rule', code: 'rejected' }]);
    expect(startedTools(engine.events)).toEqual([]);
    const last = engine.server.chatRequests.filter((request) => request.purpose === 'step').at(-1) as RecordedRequest;
    expect(toolMessagesOf(last)[0]).toMatch(/did NOT approve this call, so it did not run\. Their feedback: Denied by rule\./);
  });

  it('a person’s lock refuses the call it answers (rejected) and every later call of the tool (locked), neither started', async () => {
    const approvals: ApprovalChannel = {
      canRaiseBudgets: false,
      decide: async (request) => (request.kind === 'tool_call' ? { verdict: 'lock', constraint: { kind: 'never_tool', tool: 'write_file' }, feedback: 'no writing' } : { verdict: 'approve' }),
    };
    const engine = await startEngine(oneStep([write('a'), write('b')]), { approvals });
    expect((await engine.run('write twice')).status).toBe('completed');
    expect(refusals(engine.events)).toEqual([
      { tool: 'write_file', by: 'operator', code: 'rejected' },
      { tool: 'write_file', by: 'operator', code: 'locked' },
    ]);
    expect(startedTools(engine.events)).toEqual([]);
  });

  it('a call with invalid arguments is refused; its corrected call is the one started, then completed', async () => {
    const engine = await startEngine(oneStep([{ toolCalls: [{ name: 'calculator', arguments: { expression: 6 } }] }, { toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }]));
    expect((await engine.run('multiply')).status).toBe('completed');
    const calls = engine.events.filter((event) => event.type.startsWith('tool.')).map((event) => `${event.type} ${'code' in event ? event.code : ''}`.trim());
    expect(calls).toEqual(['tool.refused invalid_arguments', 'tool.started', 'tool.completed']);
  });
});

describe('resuming a step whose calls never started or were cut off', () => {
  /** A run a crash left in step w, after the model's reply calling `name` with `args`; `journal` as the call's row then stood. */
  async function crashed(name: string, args: Record<string, unknown>, journal: 'refused' | 'started' | 'none') {
    const reply = (request: RecordedRequest) => (request.purpose === 'final' ? { content: 'finished' } : { content: 'step done' });
    const approvals: ApprovalChannel = { canRaiseBudgets: false, decide: async (request) => (request.kind === 'uncertain_repeat' ? { verdict: 'reject', feedback: 'no' } : { verdict: 'approve' }) };
    const engine = await startEngine({ reply }, { approvals });
    const runs = engine.runtime.store.runs;
    const now = new Date().toISOString();
    runs.createRun({ id: 'crashed', goal: 'g', policy: 'balanced', options: { modelUrl: engine.server.url, model: '', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: engine.workspace, maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 }, now });
    runs.savePlan('crashed', [{ id: 'w', description: 'write it', dependencies: [] }]);
    runs.setStepStatus('crashed', 'w', 'running', now);
    runs.setRunStatus('crashed', 'running', now);
    const messages = [
      { role: 'system' as const, content: 'you carry out a step' },
      { role: 'user' as const, content: 'Step w: write it' },
      { role: 'assistant' as const, content: null, toolCalls: [{ id: 'model-call-1', name, arguments: JSON.stringify(args) }] },
    ];
    const callId = StepConversation.open(runs, { runId: 'crashed', stepId: 'w', attempt: 1 }, () => messages).callId(2, 0, { name, args });
    if (journal !== 'none') await runs.startToolCall({ id: callId, runId: 'crashed', stepId: 'w', tool: name, args, sideEffects: 'reversible', idempotent: false, now });
    if (journal === 'refused') runs.finishToolCall({ runId: 'crashed', id: callId }, toolResult('error', 'Unknown tool "no_such_tool". Available tools: calculator.'), now);
    expect((await engine.resume('crashed')).status).toBe('completed');
    return { engine, told: toolMessagesOf(engine.server.chatRequests.find((request) => request.purpose === 'step') as RecordedRequest) };
  }

  it('a refusal already journalled is fed back as it was, not announced again', async () => {
    const { engine, told } = await crashed('no_such_tool', { x: 1 }, 'refused');
    expect(told).toEqual(['error: Unknown tool "no_such_tool". Available tools: calculator.']);
    expect(engine.events.filter((event) => event.type.startsWith('tool.'))).toEqual([]);
  });

  it('a call the crash caught before it was journalled is refused now, once', async () => {
    const { engine, told } = await crashed('no_such_tool', { x: 1 }, 'none');
    expect(told).toEqual([expect.stringMatching(/^error: Unknown tool "no_such_tool"/)]);
    expect(refusals(engine.events)).toEqual([{ tool: 'no_such_tool', by: 'archon', code: 'unknown_tool' }]);
  });

  it('an interrupted call not run again ends with its outcome unknown and is not announced as started a second time', async () => {
    const { engine, told } = await crashed('write_file', { path: 'a.txt', content: 'a' }, 'started');
    expect(told).toEqual([expect.stringMatching(/^error: Outcome unknown/)]);
    expect(engine.events.filter((event) => event.type.startsWith('tool.')).map((event) => event.type)).toEqual(['tool.completed']);
  });
});

describe("a run held beyond this machine (a cluster's worker drives it)", () => {
  it('hands its record over before each model and tool call leaves: the call is in it as begun, its effect not yet happened', async () => {
    const seen: { calls: { tool: string; status: string }[]; written: boolean }[] = [];
    let engine: Awaited<ReturnType<typeof startEngine>> | null = null;
    const replicate = async () => {
      const runtime = engine?.runtime;
      const runId = runtime?.store.runs.listRuns(1)[0]?.id;
      if (!runtime || !runId || !engine) throw new Error('no run yet');
      const calls = runtime.store.runs.rows.read(runId).filter((row) => row.table === 'tool_calls').map((row) => ({ tool: String(row.values.tool), status: String(row.values.status) }));
      seen.push({ calls, written: existsSync(join(engine.workspace, 'a.txt')) });
    };
    engine = await startEngine(oneStep([write('a')]), { replicate });
    expect((await engine.run('write a')).status).toBe('completed');
    // One hand-over per model request (the probe before the run is not one of its calls), one more for the write, which was in the record as begun while a.txt did not exist.
    expect(seen).toHaveLength(engine.server.requests.filter((request) => request.purpose !== 'probe').length + 1);
    const beforeWrite = seen.find((snapshot) => snapshot.calls.length > 0);
    expect(beforeWrite).toEqual({ calls: [{ tool: 'write_file', status: 'started' }], written: false });
    expect(seen.at(-1)?.written).toBe(true);
  });

  it('a call whose hand-over is refused (another attempt took the run) does not leave', async () => {
    let engine: Awaited<ReturnType<typeof startEngine>> | null = null;
    let refused = 0;
    const replicate = async () => {
      const runs = engine?.runtime.store.runs;
      const runId = runs?.listRuns(1)[0]?.id;
      if (runs && runId && runs.rows.read(runId).some((row) => row.table === 'tool_calls')) {
        refused++;
        throw new ArchonError('RUN_LEASED', 'Taken up by another attempt.');
      }
    };
    engine = await startEngine(oneStep([write('a')]), { replicate });
    const result = await engine.run('write a');
    expect(refused).toBeGreaterThan(0);
    expect(result.status).not.toBe('completed');
    expect(existsSync(join(engine.workspace, 'a.txt'))).toBe(false);
  });
  it('a call whose run is stopped while it waits for its hand-over does not leave, and ends recorded as not run, not as possibly happened', async () => {
    const stopping = new AbortController();
    let engine: Awaited<ReturnType<typeof startEngine>> | null = null;
    const replicate = (signal: AbortSignal) => {
      const runs = engine?.runtime.store.runs;
      const runId = runs?.listRuns(1)[0]?.id;
      if (!runs || !runId || !runs.rows.read(runId).some((row) => row.table === 'tool_calls')) return Promise.resolve();
      // The hand-over of the write hangs until the run is stopped (an operator's stop while the cluster is slow to answer).
      setImmediate(() => stopping.abort());
      return new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    };
    engine = await startEngine(oneStep([write('a')]), { replicate });
    const result = await engine.run('write a', {}, stopping.signal);
    expect(result.status).toBe('stopped');
    expect(existsSync(join(engine.workspace, 'a.txt'))).toBe(false);
    const calls = engine.runtime.store.runs.rows.read(result.runId).filter((row) => row.table === 'tool_calls');
    expect(calls).toHaveLength(1);
    expect(engine.runtime.store.runs.toolCall(String(calls[0]?.values.id))?.result).toMatchObject({ status: 'cancelled', content: 'It did not run: the run was stopped before it started' });
  });
});
