import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { StepConversation } from '../../../src/core/run/step-conversation';
import { processStartTicks } from '../../../src/core/process/process-liveness';
import { z } from 'zod';
import { denyAll } from '../../../src/core/approval/approval-channel';
import { ArchonError } from '../../../src/shared/errors';
import { defineTool, ToolRegistry, toolResult, type ToolDefinition } from '../../../src/core/tools/tool-registry';
import { planReply, requestText, stepIdOf, toolMessagesOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';

const startEngine = useEngine();

/** Approves everything but tool calls, which it refuses. */
const denyToolCalls = {
  canRaiseBudgets: false,
  decide: async (request: { kind: string }) => (request.kind === 'tool_call' ? denyAll.decide(request as never, { signal: new AbortController().signal }) : ({ verdict: 'approve' } as const)),
};

/** Routes requests by purpose; `step` gets the request and how many step requests came before for that step. */
function script(handlers: { plan: (request: RecordedRequest, index: number) => ScriptedReply; step?: (request: RecordedRequest, turn: number) => ScriptedReply; final?: (request: RecordedRequest) => ScriptedReply }) {
  const turns = new Map<string, number>();
  let plans = 0;
  return (request: RecordedRequest): ScriptedReply => {
    if (request.purpose === 'plan') return handlers.plan(request, plans++);
    if (request.purpose === 'final') return handlers.final?.(request) ?? { content: 'final answer' };
    const id = stepIdOf(request) ?? '?';
    const turn = turns.get(id) ?? 0;
    turns.set(id, turn + 1);
    return handlers.step?.(request, turn) ?? { content: `result of ${id}` };
  };
}

describe('run engine against the scripted server (real openai client)', () => {
  it('Calculate 20% of 50: plan → calculator → an answer containing 10; the result is in the next request', async () => {
    const engine = await startEngine({
      reply: script({
        plan: () => planReply([{ id: 'compute', description: 'Compute 20% of 50 with the calculator' }]),
        step: (_request, turn) => (turn === 0 ? { toolCalls: [{ name: 'calculator', arguments: { expression: '20% * 50' } }] } : { content: '20% of 50 is 10' }),
        final: (request) => ({ content: requestText(request).includes('20% of 50 is 10') ? 'The answer is 10.' : 'I do not know.' }),
      }),
    });
    const result = await engine.run('Calculate 20% of 50');
    expect(result).toMatchObject({ status: 'completed', answer: expect.stringContaining('10') });
    const planRequest = engine.server.chatRequests.find((request) => request.purpose === 'plan');
    expect(requestText(planRequest as RecordedRequest)).toContain('Calculate 20% of 50');
    expect(planRequest?.body.tools?.map((tool) => tool.function.name)).toEqual(['submit_plan']);
    const stepRequests = engine.server.chatRequests.filter((request) => request.purpose === 'step');
    expect(requestText(stepRequests[0] as RecordedRequest)).toContain('Compute 20% of 50 with the calculator');
    expect(stepRequests[0]?.body.tools?.map((tool) => tool.function.name)).toEqual(['calculator', 'list_files', 'read_file', 'write_file', 'run_command', 'search_files', 'http_get']);
    expect(toolMessagesOf(stepRequests[1] as RecordedRequest)).toEqual(['10']);
    const finalRequest = engine.server.chatRequests.find((request) => request.purpose === 'final');
    expect(finalRequest?.body.tools).toBeUndefined();
    expect(engine.events.map((event) => event.type).filter((type) => type !== 'budget.updated')).toEqual([
      'run.started',
      // The probe's requests: the models, the request with tools, and three servers' context length endpoints.
      ...Array<string>(5).fill('model.completed'),
      'model.probed',
      'contract.ready',
      'bus.message',
      'model.completed',
      'bus.message',
      'validation.completed',
      'approval.requested',
      'approval.resolved',
      'plan.ready',
      'step.started',
      'bus.message',
      'model.completed',
      'tool.started',
      'tool.completed',
      'model.completed',
      'validation.completed',
      'bus.message',
      'bus.message',
      'step.completed',
      // The final answer, then the outcome check's one critic call.
      'model.completed',
      'model.completed',
      'outcome.checked',
      'approval.requested',
      'approval.resolved',
      'run.completed',
    ]);
    expect(engine.events.filter((event) => event.type === 'approval.requested').map((event) => event.type === 'approval.requested' && event.kind)).toEqual(['plan', 'final_answer']);
    expect(engine.events.map((event) => event.seq)).toEqual(engine.events.map((_, index) => index + 1));
  });

  it('runs a step whose plan names the tool and its arguments without asking the model', async () => {
    const engine = await startEngine({
      reply: script({ plan: () => planReply([{ id: 'c', description: 'compute', tool: 'calculator', args: { expression: '6*7' } }]), final: (request) => ({ content: requestText(request).includes(': 42') ? '42' : '?' }) }),
    });
    expect(await engine.run('six times seven')).toMatchObject({ status: 'completed', answer: '42' });
    expect(engine.server.chatRequests.filter((request) => request.purpose === 'step')).toHaveLength(0);
  });

  it('keeps 8 independent steps in flight at once with --concurrency 8', async () => {
    const steps = Array.from({ length: 8 }, (_, index) => ({ id: `s${index}`, description: `independent task ${index}` }));
    const engine = await startEngine({ reply: script({ plan: () => planReply(steps) }), latencyMs: 250 });
    expect((await engine.run('eight things', { concurrency: 8 })).status).toBe('completed');
    expect(engine.server.stats.maxInFlight).toBeGreaterThanOrEqual(8);
  });

  it('honours a lower concurrency limit, and hands dependency results to dependents', async () => {
    const engine = await startEngine({
      reply: script({
        plan: () => planReply([{ id: 'a', description: 'first' }, { id: 'b', description: 'second' }, { id: 'c', description: 'third' }, { id: 'd', description: 'combine', dependencies: ['a', 'b', 'c'] }]),
      }),
      latencyMs: 60,
    });
    expect((await engine.run('fan in', { concurrency: 2 })).status).toBe('completed');
    expect(engine.server.stats.maxInFlight).toBe(2);
    const combine = engine.server.chatRequests.find((request) => stepIdOf(request) === 'd') as RecordedRequest;
    expect(requestText(combine)).toMatch(/- a: result of a[\s\S]*- b: result of b[\s\S]*- c: result of c/);
  });

  it('refuses a cyclic plan naming the cycle, asks again, and runs the second plan', async () => {
    const engine = await startEngine({
      reply: script({
        plan: (_request, index) =>
          index === 0
            ? planReply([{ id: 'a', description: 'x', dependencies: ['b'] }, { id: 'b', description: 'y', dependencies: ['a'] }])
            : planReply([{ id: 'a', description: 'x' }, { id: 'b', description: 'y', dependencies: ['a'] }]),
      }),
    });
    expect((await engine.run('cyclic')).status).toBe('completed');
    const retry = engine.server.chatRequests.filter((request) => request.purpose === 'plan')[1] as RecordedRequest;
    expect(toolMessagesOf(retry).join(' ')).toMatch(/cycle: (a → b → a|b → a → b)/);
  });

  it('fails the run when the model cannot plan within the repairs', async () => {
    const engine = await startEngine({ reply: script({ plan: () => ({ content: 'I would rather not.' }) }) });
    const result = await engine.run('impossible');
    expect(result).toMatchObject({ status: 'failed', error: expect.stringMatching(/valid plan in 3 attempts.*submit_plan/) });
    expect(engine.server.chatRequests.filter((request) => request.purpose === 'plan')).toHaveLength(3);
  });

  it('feeds back malformed arguments, an unknown tool and a wrong argument type, and the step recovers', async () => {
    const engine = await startEngine({
      reply: script({
        plan: () => planReply([{ id: 'm', description: 'messy math' }]),
        step: (_request, turn) =>
          [
            { toolCalls: [{ name: 'calculator', arguments: '{"expression": "2+' }] },
            { toolCalls: [{ name: 'abacus', arguments: { beads: 3 } }] },
            { toolCalls: [{ name: 'calculator', arguments: { expression: 42 } }] },
            { toolCalls: [{ name: 'calculator', arguments: { expression: '2+2' } }] },
            { content: 'It is 4.' },
          ][turn] as ScriptedReply,
      }),
    });
    expect((await engine.run('messy')).status).toBe('completed');
    const last = engine.server.chatRequests.filter((request) => request.purpose === 'step').at(-1) as RecordedRequest;
    const [malformed, unknown, wrongType, ok] = toolMessagesOf(last);
    expect(malformed).toMatch(/not valid JSON/);
    expect(unknown).toMatch(/Unknown tool "abacus". Available tools: calculator/);
    expect(wrongType).toMatch(/Invalid arguments for calculator: expression: .*expected string/i);
    expect(ok).toBe('4');
  });

  it('stops a step that repeats the same call with loop_detected; with no re-plan allowed the operator is asked, and --approve auto ends the run', async () => {
    const engine = await startEngine({
      reply: script({
        plan: () => planReply([{ id: 'loop', description: 'spin' }, { id: 'after', description: 'never', dependencies: ['loop'] }]),
        step: () => ({ toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] }),
      }),
    });
    const result = await engine.run('loop forever', { maxReplans: 0 });
    expect(result).toMatchObject({ status: 'failed', error: expect.stringMatching(/Step loop could not be completed: loop_detected.*gap trend/) });
    expect(engine.events).toContainEqual(expect.objectContaining({ type: 'step.failed', stepId: 'loop', reason: expect.stringMatching(/^loop_detected/) }));
    expect(engine.events).toContainEqual(expect.objectContaining({ type: 'escalation.raised', stepId: 'loop' }));
    expect(engine.server.chatRequests.filter((request) => stepIdOf(request) === 'after')).toHaveLength(0);
    expect(engine.server.chatRequests.filter((request) => request.purpose === 'step')).toHaveLength(3);
    expect(engine.server.chatRequests.filter((request) => request.purpose === 'replan')).toHaveLength(0);
  });

  it('speaks the text protocol end to end with a server that rejects tools', async () => {
    const engine = await startEngine({
      rejectTools: true,
      reply: script({
        plan: () => ({ content: 'Here is my plan:\n{"goal": "g", "steps": [{"id": "calc", "description": "Compute 20% of 50", "dependencies": [],}]}' }),
        step: (_request, turn) => (turn === 0 ? { content: 'Thought: use the calculator.\nAction: {"tool": "calculator", "arguments": {"expression": "0.2*50"}}' } : { content: 'Final Answer: 10' }),
        final: () => ({ content: 'Final Answer: 20% of 50 is 10.' }),
      }),
    });
    expect(await engine.run('Calculate 20% of 50')).toMatchObject({ status: 'completed', answer: '20% of 50 is 10.' });
    expect(engine.server.chatRequests.every((request) => request.body.tools === undefined)).toBe(true);
    const second = engine.server.chatRequests.filter((request) => request.purpose === 'step')[1] as RecordedRequest;
    expect(requestText(second)).toContain('Observation: 10');
    expect(requestText(engine.server.chatRequests[0] as RecordedRequest)).toContain('Reply with one JSON object');
  });

  it('retries 429 and 500 for the retry window, then pauses the run (run.paused, what to do); failed attempts cost nothing', async () => {
    const engine = await startEngine({
      reply: script({ plan: () => planReply([{ id: 'flaky', description: 'call a flaky server' }]), step: (_request, turn) => ({ status: turn === 0 ? 429 : 500 }) }),
    });
    const result = await engine.run('flaky');
    expect(result.status).toBe('paused');
    expect(engine.runtime.store.runs.getRun(result.runId)?.summary.status).toBe('paused');
    expect(engine.events).toContainEqual(expect.objectContaining({ type: 'run.paused', reason: expect.stringMatching(/did not answer.*HTTP 500/s), whatToDo: expect.stringContaining(`archon resume ${result.runId}`) }));
    expect(engine.events.some((event) => event.type === 'step.failed')).toBe(false);
    const failed = engine.runtime.store.db.prepare("SELECT prompt_tokens + completion_tokens AS t FROM model_calls WHERE purpose = 'step'").all() as { t: number }[];
    expect(failed.length).toBeGreaterThan(1);
    expect(failed.every((row) => row.t === 0)).toBe(true);
    expect(engine.runtime.store.runs.getSteps(result.runId)[0]?.status).toBe('stopped');
  });

  it('asks before a side-effecting tool; refused, it never runs and the model is told it did NOT run', async () => {
    let executed = 0;
    const write = defineTool({
      name: 'write_note',
      description: 'writes a note',
      input: z.object({ text: z.string() }),
      sideEffects: 'reversible',
      idempotent: false,
      timeoutMs: 1000,
      run: async () => {
        executed++;
        return toolResult('success', 'written');
      },
    });
    const engine = await startEngine(
      {
        reply: script({
          plan: () => planReply([{ id: 'w', description: 'write a note' }]),
          step: (_request, turn) => (turn === 0 ? { toolCalls: [{ name: 'write_note', arguments: { text: 'hi' } }] } : { content: 'could not write' }),
        }),
      },
      { tools: (builtin) => new ToolRegistry([builtin.get('calculator') as ToolDefinition, write]), approvals: denyToolCalls },
    );
    await engine.run('write');
    expect(executed).toBe(0);
    const types = engine.events.map((event) => event.type);
    expect(types.indexOf('approval.requested')).toBeLessThan(types.indexOf('approval.resolved'));
    const second = engine.server.chatRequests.filter((request) => request.purpose === 'step')[1] as RecordedRequest;
    expect(toolMessagesOf(second)[0]).toMatch(/denied: The operator did NOT approve this call, so it did not run/);
    expect(engine.runtime.store.db.prepare("SELECT status FROM approvals WHERE kind = 'tool_call'").all()).toEqual([{ status: 'rejected' }]);
  });

  it('caps a long observation and says so', async () => {
    const long = defineTool({
      name: 'dump',
      description: 'prints a lot',
      input: z.object({}),
      sideEffects: 'none',
      idempotent: true,
      timeoutMs: 1000,
      run: async () => toolResult('success', 'x'.repeat(20_000)),
    });
    const engine = await startEngine(
      { reply: script({ plan: () => planReply([{ id: 'd', description: 'dump' }]), step: (_request, turn) => (turn === 0 ? { toolCalls: [{ name: 'dump', arguments: {} }] } : { content: 'done' }) }) },
      { tools: () => new ToolRegistry([long]) },
    );
    await engine.run('dump');
    const second = engine.server.chatRequests.filter((request) => request.purpose === 'step')[1] as RecordedRequest;
    const observation = toolMessagesOf(second)[0] as string;
    expect(observation.length).toBeLessThan(8200);
    expect(observation).toMatch(/\[truncated: 12000 more characters not shown\]$/);
  });

  it('stops at the iteration cap', async () => {
    const engine = await startEngine({
      reply: script({ plan: () => planReply([{ id: 'busy', description: 'busy' }]), step: (_request, turn) => ({ toolCalls: [{ name: 'calculator', arguments: { expression: `${turn}+1` } }] }) }),
    });
    const result = await engine.run('busy', { maxIterations: 4 });
    expect(result.status).toBe('failed');
    expect(engine.events).toContainEqual(expect.objectContaining({ type: 'step.failed', reason: expect.stringMatching(/^iteration_cap: .* 4 model turns/) }));
  });

  it('ends as stopped, not failed, when the run is aborted mid-call', async () => {
    const engine = await startEngine({ reply: script({ plan: () => planReply([{ id: 'h', description: 'hang' }]), step: () => ({ hang: true }) }) });
    const controller = new AbortController();
    const pending = engine.run('hang', {}, controller.signal);
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (engine.server.stats.inFlight > 0) {
          clearInterval(timer);
          resolve();
        }
      }, 10);
    });
    controller.abort();
    expect((await pending).status).toBe('stopped');
    expect(engine.runtime.store.runs.getSteps((await pending).runId)[0]?.status).toBe('stopped');
  });
});

describe('resuming after a crash in the middle of a tool call', () => {
  async function crashedRun(tool: 'write_note' | 'calculator', verdict: 'approve' | 'reject', recorded: { idempotent?: boolean; definitionHash?: string } = {}) {
    const asked: string[] = [];
    let written = 0;
    const write = defineTool({
      name: 'write_note',
      description: 'writes a note',
      input: z.object({ text: z.string() }),
      sideEffects: 'irreversible',
      idempotent: false,
      timeoutMs: 1000,
      run: async () => {
        written++;
        return toolResult('success', 'written');
      },
    });
    const approvals = {
      canRaiseBudgets: false,
      decide: async (request: { kind: string }) => {
        if (request.kind !== 'uncertain_repeat') return { verdict: 'approve' } as const;
        asked.push(request.kind);
        return verdict === 'approve' ? ({ verdict } as const) : ({ verdict, feedback: 'no' } as const);
      },
    };
    const args = tool === 'calculator' ? { expression: '1+1' } : { text: 'hi' };
    const reply = script({ plan: () => planReply([]), step: () => ({ content: 'step done' }), final: () => ({ content: 'finished' }) });
    const engine = await startEngine({ reply }, { tools: (builtin) => new ToolRegistry([builtin.get('calculator') as ToolDefinition, write]), approvals });
    const runs = engine.runtime.store.runs;
    const now = new Date().toISOString();
    const options = { modelUrl: engine.server.url, model: '', policy: 'balanced' as const, concurrency: null, maxTokens: null, maxCostUsd: null, workspace: '/tmp', maxIterations: 10, verification: 'checks' as const, repairBudget: 2, maxReplans: 3 };
    runs.createRun({ id: 'crashed', goal: 'g', policy: 'balanced', options, now });
    runs.savePlan('crashed', [{ id: 'w', description: 'write it', dependencies: [] }]);
    runs.setStepStatus('crashed', 'w', 'running', now);
    runs.setRunStatus('crashed', 'running', now);
    // The step's conversation as a crash left it: the model's reply with its call, and the call started with no result.
    const messages = [
      { role: 'system' as const, content: 'you carry out a step' },
      { role: 'user' as const, content: 'Step w: write it' },
      { role: 'assistant' as const, content: null, toolCalls: [{ id: 'model-call-1', name: tool, arguments: JSON.stringify(args) }] },
    ];
    const conversation = StepConversation.open(runs, { runId: 'crashed', stepId: 'w', attempt: 1 }, () => messages);
    const callId = conversation.callId(2, 0, { name: tool, args });
    await runs.startToolCall({ id: callId, runId: 'crashed', stepId: 'w', tool, args, sideEffects: tool === 'calculator' ? 'none' : 'irreversible', idempotent: recorded.idempotent ?? tool === 'calculator', definitionHash: recorded.definitionHash, now });
    return { engine, asked, written: () => written, callId };
  }

  it('asks (uncertain_repeat) before repeating a call that may have happened; without a yes the model is told the outcome is unknown', async () => {
    const { engine, asked, written, callId } = await crashedRun('write_note', 'reject');
    expect(await engine.resume('crashed')).toMatchObject({ status: 'completed', answer: 'finished' });
    expect(asked).toEqual(['uncertain_repeat']);
    expect(written()).toBe(0);
    const step = engine.server.chatRequests.find((request) => request.purpose === 'step') as RecordedRequest;
    expect(toolMessagesOf(step)).toEqual([expect.stringMatching(/^error: Outcome unknown: .*Check its effect first/s)]);
    expect(requestText(step)).toContain('write it');
    expect(engine.runtime.store.runs.toolCall(callId)).toMatchObject({ status: 'error' });
  });

  it('repeats it once when the human says yes, and feeds the new result back', async () => {
    const { engine, asked, written } = await crashedRun('write_note', 'approve');
    expect(await engine.resume('crashed')).toMatchObject({ status: 'completed', answer: 'finished' });
    expect(asked).toEqual(['uncertain_repeat']);
    expect(written()).toBe(1);
    expect(toolMessagesOf(engine.server.chatRequests.find((request) => request.purpose === 'step') as RecordedRequest)).toEqual(['written']);
  });

  it('simply repeats an interrupted idempotent call, without asking', async () => {
    const { engine, asked } = await crashedRun('calculator', 'reject');
    expect((await engine.resume('crashed')).status).toBe('completed');
    expect(asked).toEqual([]);
    expect(toolMessagesOf(engine.server.chatRequests.find((request) => request.purpose === 'step') as RecordedRequest)).toEqual(['2']);
  });

  it('asks when the call was recorded as not idempotent, even if the tool of that name now says it is', async () => {
    const { engine, asked } = await crashedRun('calculator', 'reject', { idempotent: false });
    expect((await engine.resume('crashed')).status).toBe('completed');
    expect(asked).toEqual(['uncertain_repeat']);
    expect(toolMessagesOf(engine.server.chatRequests.find((request) => request.purpose === 'step') as RecordedRequest)).toEqual([expect.stringMatching(/^error: Outcome unknown/)]);
  });

  it('asks when the call was made to another definition of the tool than the one there now', async () => {
    const { engine, asked } = await crashedRun('calculator', 'approve', { definitionHash: 'sha256:the-definition-the-call-was-made-to' });
    expect((await engine.resume('crashed')).status).toBe('completed');
    expect(asked).toEqual(['uncertain_repeat']);
    expect(toolMessagesOf(engine.server.chatRequests.find((request) => request.purpose === 'step') as RecordedRequest)).toEqual(['2']);
  });

  it('kills a tool process group the dead process left running before the run goes on (tool.orphan_killed)', async () => {
    const { engine, callId } = await crashedRun('calculator', 'reject');
    const orphan = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    const gone = new Promise((resolve) => orphan.on('exit', (_code, signal) => resolve(signal)));
    engine.runtime.store.runs.recordToolProcess({ runId: 'crashed', callId, pgid: orphan.pid as number, startTicks: processStartTicks(orphan.pid as number) });
    expect((await engine.resume('crashed')).status).toBe('completed');
    expect(await gone).toBe('SIGKILL');
    expect(engine.events).toContainEqual(expect.objectContaining({ type: 'tool.orphan_killed', callId, pgid: orphan.pid }));
    expect(engine.runtime.store.runs.toolProcesses('crashed')).toEqual([]);
  });

  it.each([['a start time that is not its own', 'another process once had this id'], ['no start time (the command had already ended)', null]])('never kills a process group it cannot prove is the one the call started (ids wrap): %s', async (_case, startTicks) => {
    const { engine, callId } = await crashedRun('calculator', 'reject');
    const bystander = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    try {
      engine.runtime.store.runs.recordToolProcess({ runId: 'crashed', callId, pgid: bystander.pid as number, startTicks });
      expect((await engine.resume('crashed')).status).toBe('completed');
      expect(bystander.exitCode).toBeNull();
      expect(bystander.signalCode).toBeNull();
      expect(engine.events.some((event) => event.type === 'tool.orphan_killed')).toBe(false);
    } finally {
      bystander.kill('SIGKILL');
    }
  });

  it("keeps the operator's locks across a resume", async () => {
    const { engine } = await crashedRun('calculator', 'reject');
    engine.runtime.events.append('crashed', 'constraint.locked', { constraint: { kind: 'never_tool', tool: 'write_note' } });
    engine.runtime.events.flush();
    expect((await engine.resume('crashed')).status).toBe('completed');
    const step = engine.server.chatRequests.find((request) => request.purpose === 'step') as RecordedRequest;
    expect(step.body.tools?.map((tool) => tool.function.name)).toEqual(['calculator']);
  });

  it('feeds back a call that finished before the crash and never runs it again', async () => {
    const { engine, asked, written, callId } = await crashedRun('write_note', 'approve');
    engine.runtime.store.runs.finishToolCall({ runId: 'crashed', id: callId }, toolResult('success', 'written before the crash'), new Date().toISOString());
    expect((await engine.resume('crashed')).status).toBe('completed');
    expect(asked).toEqual([]);
    expect(written()).toBe(0);
    expect(toolMessagesOf(engine.server.chatRequests.find((request) => request.purpose === 'step') as RecordedRequest)).toEqual(['written before the crash']);
  });
});

describe('tools in their own processes, seen from the model', () => {
  it('hands tool results and tool errors back as observations', async () => {
    const engine = await startEngine({
      reply: script({
        plan: () => planReply([{ id: 'files', description: 'work with files' }]),
        step: (_request, turn) =>
          [
            { toolCalls: [{ name: 'read_file', arguments: { path: 'missing.md' } }] },
            { toolCalls: [{ name: 'write_file', arguments: { path: 'notes/list.md', content: 'buy milk' } }, { name: 'write_file', arguments: { path: '../escape.md', content: 'x' } }] },
            { toolCalls: [{ name: 'read_file', arguments: { path: 'notes/list.md' } }] },
            { content: 'The note says: buy milk' },
          ][turn] as ScriptedReply,
      }),
    });
    expect((await engine.run('notes')).status).toBe('completed');
    const last = engine.server.chatRequests.filter((request) => request.purpose === 'step').at(-1) as RecordedRequest;
    const [missing, written, escaped, read] = toolMessagesOf(last);
    expect(missing).toMatch(/^error: read_file: no such file/);
    expect(written).toBe('Wrote 8 bytes to notes/list.md.');
    expect(escaped).toMatch(/^denied: "..\/escape.md" is outside the workspace/);
    expect(read).toBe('buy milk');
  });
});

describe('nothing is left running', () => {
  it('an unexpected error ends the run failed, with its cause in run.failed', async () => {
    const broken = { canRaiseBudgets: false, decide: async () => Promise.reject(new TypeError('the approval channel broke')) };
    const engine = await startEngine({ reply: script({ plan: () => planReply([{ id: 'a', description: 'anything' }]) }) }, { approvals: broken });
    const result = await engine.run('meet a bug');
    expect(result).toMatchObject({ status: 'failed', error: expect.stringMatching(/Unexpected error: the approval channel broke.*archon resume/s) });
    expect(engine.runtime.store.runs.getRun(result.runId)?.summary.status).toBe('failed');
    expect(engine.events.at(-1)).toMatchObject({ type: 'run.failed', error: expect.stringContaining('the approval channel broke') });
  });

  it('a full disk when a failed model attempt is recorded: the run pauses at once, the call not tried again unrecorded', async () => {
    let full = false;
    const engine = await startEngine({
      reply: script({
        plan: () => planReply([{ id: 'one', description: 'first' }]),
        step: () => {
          if (full) return { content: 'done' };
          full = true;
          const db = engine.runtime.store.db;
          db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
          // A retryable refusal whose error, recorded with the attempt, needs new pages.
          return { status: 503, message: `overloaded ${'.'.repeat(20_000)}` };
        },
      }),
    });
    const paused = await engine.run('fill the disk at a failed call');
    expect(paused).toMatchObject({ status: 'paused', error: expect.stringMatching(/disk .* is full.*Free some space, then resume/) });
    expect(engine.server.chatRequests.filter((request) => request.purpose === 'step')).toHaveLength(1);
    engine.runtime.store.db.pragma('max_page_count = 1073741823');
    expect(await engine.resume(paused.runId)).toMatchObject({ status: 'completed' });
  });

  it('a full disk mid-run: a typed DISK_FULL, nothing lost, and resume continues once there is room', async () => {
    let full = false;
    const engine = await startEngine({
      reply: script({
        plan: () => planReply([{ id: 'one', description: 'first' }, { id: 'two', description: 'second', dependencies: ['one'] }]),
        step: (request) => {
          if (stepIdOf(request) === 'two' && !full) {
            full = true;
            // The disk fills up while step two is being answered: SQLite refuses every new page.
            const db = engine.runtime.store.db;
            db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
            // Longer than the free room left in any page: recording it needs new pages.
            return { content: `result of two ${'.'.repeat(20_000)}` };
          }
          // Step two's result needs new pages whatever room the last ones have left.
          return { content: stepIdOf(request) === 'two' ? `result of two: ${'x'.repeat(64_000)}` : `result of ${stepIdOf(request)}` };
        },
      }),
    });
    // Not even the ending can be written: the run throws a typed DISK_FULL (the CLI exits 6) and stays resumable.
    const failure = await engine.run('fill the disk').catch((error: unknown) => error);
    expect(ArchonError.isInstance(failure) && failure.code).toBe('DISK_FULL');
    expect((failure as Error).message).toMatch(/disk .* is full.*Free some space, then resume/);
    engine.runtime.store.db.pragma('max_page_count = 1073741823');
    const runId = engine.runtime.store.runs.listRuns(1)[0]?.id as string;
    expect(await engine.resume(runId)).toMatchObject({ status: 'completed' });
    expect(engine.server.chatRequests.filter((request) => request.purpose === 'step').map(stepIdOf).filter((id) => id === 'one')).toHaveLength(1);
  });
});
