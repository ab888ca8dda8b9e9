import { describe, expect, it } from 'vitest';
import { readModelTurn, readToolCalls } from '../../../../src/core/model/dialects/read-tool-calls';
import { splitReasoning } from '../../../../src/core/model/dialects/reasoning';
import { tool } from '../../../fixtures/dialects/fixture';

const CALCULATOR = tool('calculator', { expression: 'string' });
const args = (text: string) => JSON.parse(text) as unknown;

describe('reading tool calls in any dialect', () => {
  it('finds no call in prose, in JSON that names no offered tool, or when nothing is offered', () => {
    expect(readToolCalls('The answer is 42.', [CALCULATOR])).toBeNull();
    // ollama/ollama tools/tools_test.go "json not a tool call": `search` was not offered.
    expect(readToolCalls('{"name": "search", "arguments": {"query": "What is the capital of Canada?"}}', [tool('get_temperature')])).toBeNull();
    expect(readToolCalls('<tool_call>{"name": "calculator", "arguments": {}}</tool_call>', [])).toBeNull();
  });

  it('returns what the model said before its call, without reasoning or markup', () => {
    const reading = readToolCalls('<think>6 times 7</think>Let me compute. <tool_call>{"name": "calculator", "arguments": {"expression": "6*7"}}</tool_call>', [CALCULATOR]);
    expect(reading).toMatchObject({ dialect: 'hermes', content: 'Let me compute.' });
  });

  it('finds a call written inside the reasoning, in a <think> block or in the reasoning field', () => {
    const inThink = readToolCalls('<think>I will call it: <tool_call>{"name": "calculator", "arguments": {"expression": "6*7"}}</tool_call></think>', [CALCULATOR]);
    expect(inThink).toMatchObject({ dialect: 'hermes', at: -1, content: '' });
    const inField = readToolCalls('', [CALCULATOR], { reasoning: '[TOOL_CALLS]calculator[ARGS]{"expression": "6*7"}' });
    expect(inField?.dialect).toBe('mistral');
    expect(args(inField?.calls[0]?.arguments ?? '')).toEqual({ expression: '6*7' });
  });

  it('repairs arguments with jsonrepair: Python literals, single quotes, trailing commas', () => {
    const reading = readToolCalls("<tool_call>{'name': 'calculator', 'arguments': {'expression': '6*7', 'exact': True, 'note': None,}}</tool_call>", [tool('calculator')]);
    expect(args(reading?.calls[0]?.arguments ?? '')).toEqual({ expression: '6*7', exact: true, note: null });
  });

  it('passes unreadable arguments on as the model wrote them, for the step to report', () => {
    const reading = readToolCalls('[TOOL_CALLS]calculator[ARGS]{"expression" 6 7 }}}', [CALCULATOR]);
    expect(reading?.calls[0]?.arguments).toBe('{"expression" 6 7 }');
  });

  it("tries the run's dialect first", () => {
    const text = 'Action: {"tool": "calculator", "arguments": {"expression": "1+1"}}\n<tool_call>{"name": "calculator", "arguments": {"expression": "6*7"}}</tool_call>';
    expect(readToolCalls(text, [CALCULATOR])?.dialect).toBe('hermes');
    expect(readToolCalls(text, [CALCULATOR], { preferred: 'archon' })?.dialect).toBe('archon');
  });
});

describe('reasoning wrappers', () => {
  it.each([
    ['<think>a</think>b', 'b', 'a'],
    ['a</think>b', 'b', 'a'],
    ['<think>a', '', 'a'],
    ['<|START_THINKING|>a<|END_THINKING|>b', 'b', 'a'],
    ['[THINK]a[/THINK]b', 'b', 'a'],
    ['<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>final<|message|>b', '<|start|>assistant<|channel|>final<|message|>b', 'a'],
  ])('splits %j', (text, content, reasoning) => {
    expect(splitReasoning(text)).toEqual({ content, reasoning });
  });
});

describe('a model turn as the client reads it', () => {
  it('keeps native tool calls and moves reasoning out of the content', () => {
    const toolCalls = [{ id: 'x', name: 'calculator', arguments: '{}' }];
    expect(readModelTurn({ content: '<think>hm</think>ok', reasoning: '', toolCalls }, [CALCULATOR])).toEqual({ content: 'ok', reasoning: 'hm', toolCalls });
  });

  it('turns a call written in the content into a tool call, and tells the dialect', () => {
    const turn = readModelTurn({ content: '<|tool_call_start|>[calculator(expression="6*7")]<|tool_call_end|>', reasoning: '', toolCalls: [] }, [CALCULATOR]);
    expect(turn).toEqual({ content: '', reasoning: '', toolCalls: [{ id: 'call_0', name: 'calculator', arguments: '{"expression":"6*7"}' }], dialect: 'lfm2' });
  });

  it('leaves text alone when the request offered no tools', () => {
    const content = '<tool_call>{"name": "calculator", "arguments": {}}</tool_call>';
    expect(readModelTurn({ content, reasoning: '', toolCalls: [] })).toEqual({ content, reasoning: '', toolCalls: [] });
  });

  it('shows Harmony final-channel text without its frame tokens', () => {
    expect(readModelTurn({ content: '<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>42', reasoning: '', toolCalls: [] }).content).toBe('42');
  });
});
