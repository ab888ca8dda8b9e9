import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatRequest } from '../../../src/core/model/chat';
import { completionReserve, conservativeTokens, fitToContext, promptTokens } from '../../../src/core/model/context-window';
import { planReply, toolMessagesOf, type RecordedRequest } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';

const window = { contextLength: 2048, source: 'llama.cpp /props n_ctx' };
const budget = window.contextLength - completionReserve(window.contextLength, undefined);
const system: ChatMessage = { role: 'system', content: 'You carry out one step of a plan.' };
const brief: ChatMessage = { role: 'user', content: 'Goal: summarise\nStep read: Read the two files' };
const call = (id: string, path: string): ChatMessage => ({ role: 'assistant', content: null, toolCalls: [{ id, name: 'read_file', arguments: JSON.stringify({ path }) }] });
const result = (id: string, size: number, letter: string): ChatMessage => ({ role: 'tool', toolCallId: id, content: letter.repeat(size) });
const request = (messages: ChatMessage[]): ChatRequest => ({ purpose: 'step', messages });
const contentOf = (fitted: ChatRequest, index: number) => fitted.messages[index]?.content ?? '';

describe('the context window', () => {
  it('counts conservatively: a token per three bytes of UTF-8, so CJK text weighs a token a character', () => {
    expect(conservativeTokens('abcdef')).toBe(2);
    expect(conservativeTokens('上下文窗口')).toBe(5);
  });

  it('leaves a request that fits as it is', () => {
    const small = request([system, brief, call('a', 'a.txt'), result('a', 300, 'a')]);
    expect(fitToContext(small, window)).toBe(small);
    expect(fitToContext(small, null)).toBe(small);
  });

  it('cuts the older observation first, the largest first, with a note, until the prompt fits with room for the answer', () => {
    const messages = [system, brief, call('a', 'a.txt'), result('a', 3000, 'a'), call('b', 'b.txt'), result('b', 2500, 'b')];
    const fitted = fitToContext(request(messages), window);
    expect(promptTokens(fitted.messages, undefined)).toBeLessThanOrEqual(budget);
    expect(contentOf(fitted, 3)).toMatch(/^a+\n\[truncated by Archon: \d+ of 3000 characters left out to fit the model's context of 2048 tokens\]$/);
    expect(contentOf(fitted, 5)).toBe('b'.repeat(2500));
    expect(fitted.messages.slice(0, 3)).toEqual(messages.slice(0, 3));
  });

  it('cuts the last turn too when the older ones are not enough', () => {
    const messages = [system, brief, call('a', 'a.txt'), result('a', 1000, 'a'), call('b', 'b.txt'), result('b', 8000, 'b')];
    const fitted = fitToContext(request(messages), window);
    expect(promptTokens(fitted.messages, undefined)).toBeLessThanOrEqual(budget);
    expect(contentOf(fitted, 3)).toContain('[truncated by Archon');
    expect(contentOf(fitted, 5)).toContain('[truncated by Archon');
  });

  it('cuts text-mode observations, not other user messages', () => {
    const messages: ChatMessage[] = [system, brief, { role: 'assistant', content: 'Action: {"tool": "read_file", "arguments": {"path": "a"}}' }, { role: 'user', content: `Observation: ${'x'.repeat(9000)}` }];
    const fitted = fitToContext(request(messages), window);
    expect(contentOf(fitted, 3)).toMatch(/^Observation: x+\n\[truncated by Archon/);
    expect(contentOf(fitted, 1)).toBe(brief.content);
  });

  it('keeps room for the completion the request asks for', () => {
    const messages = [system, brief, call('a', 'a.txt'), result('a', 3000, 'a')];
    const fitted = fitToContext({ ...request(messages), maxTokens: 1500 }, window);
    expect(promptTokens(fitted.messages, undefined)).toBeLessThanOrEqual(2048 - 1500);
  });

  it('refuses a request whose essentials cannot fit, naming the context and how to raise it', () => {
    const huge: ChatMessage = { role: 'user', content: `Goal: ${'g'.repeat(6000)}` };
    let failure: unknown;
    try {
      fitToContext(request([system, huge, call('a', 'a.txt'), result('a', 3000, 'a')]), window);
    } catch (error) {
      failure = error;
    }
    expect(failure).toMatchObject({ code: 'CONTEXT_TOO_SMALL', message: expect.stringMatching(/context of 2048 tokens \(llama\.cpp \/props n_ctx\).*OLLAMA_CONTEXT_LENGTH.*-c.*LM Studio/s) });
  });
});

describe('end to end: runs on servers with a small context', () => {
  const startEngine = useEngine();

  it('a step that reads a 40 KB file with a 2,048-token context completes, no request exceeds the context, and the observation says it was cut', async () => {
    const engine = await startEngine({
      llamaCpp: { contextLength: 2048, slots: 1 },
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'read', description: 'Read big.log and say what it holds' }]);
        if (request.purpose === 'final') return { content: 'big.log holds numbered log lines.' };
        return toolMessagesOf(request).length === 0 ? { toolCalls: [{ name: 'read_file', arguments: { path: 'big.log' } }] } : { content: 'Numbered log lines.' };
      },
    });
    const lines = Array.from({ length: 1000 }, (_, index) => `line ${String(index).padStart(4, '0')}: service ok, latency 12 ms`);
    writeFileSync(join(engine.workspace, 'big.log'), lines.join('\n').padEnd(40 * 1024, '.'));

    const result = await engine.run('What does big.log hold?', { workspace: engine.workspace });

    expect(result.status, result.error ?? '').toBe('completed');
    expect(engine.events.find((event) => event.type === 'model.probed')).toMatchObject({ contextLength: 2048, contextSource: 'llama.cpp /props n_ctx' });
    const measured = engine.server.chatRequests.map((request) => promptTokens(weighed(request), toolSpecs(request)));
    expect(measured.length).toBeGreaterThanOrEqual(4);
    for (const tokens of measured) expect(tokens).toBeLessThanOrEqual(2048);
    const observation = toolMessagesOf(engine.server.chatRequests.filter((request) => request.purpose === 'step').at(-1) as RecordedRequest)[0];
    expect(observation).toMatch(/^line 0000: service ok[\s\S]*\[truncated by Archon: \d+ of \d+ characters left out to fit the model's context of 2048 tokens\]$/);
  });

  it('fails the run, sending nothing, when even the essentials cannot fit, naming the context and how to raise it', async () => {
    const engine = await startEngine({ llamaCpp: { contextLength: 300, slots: 1 }, reply: () => ({ content: 'never asked' }) });
    const result = await engine.run('What does big.log hold?');
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/context of 300 tokens \(llama\.cpp \/props n_ctx\) is too small.*OLLAMA_CONTEXT_LENGTH.*-c.*LM Studio/s);
    expect(engine.server.chatRequests).toHaveLength(0);
  });
});

/** A recorded request's messages and tools, weighed exactly as Archon weighs them before sending. */
function weighed(request: RecordedRequest) {
  return (request.body.messages ?? []).map((message) => ({
    content: typeof message.content === 'string' ? message.content : null,
    toolCalls: ((message.tool_calls ?? []) as { function: { name: string; arguments: string } }[]).map((call) => call.function),
  }));
}

function toolSpecs(request: RecordedRequest) {
  return (request.body.tools ?? []).map((tool) => ({ name: tool.function.name, description: (tool.function as { description?: string }).description ?? '', parameters: tool.function.parameters as Record<string, unknown> }));
}
