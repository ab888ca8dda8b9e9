import { describe, expect, it } from 'vitest';
import { parseTextReply, textProtocolInstructions } from '../../../src/core/model/text-protocol';
import { tool } from '../../fixtures/dialects/fixture';

const tools = [tool('calculator', { expression: 'string' })];

describe('text protocol', () => {
  it('reads an Action with its JSON, leniently', () => {
    expect(parseTextReply('Thought: I need math.\nAction: {"tool": "calculator", "arguments": {"expression": "2+2",}}')).toEqual({
      kind: 'action',
      calls: [{ tool: 'calculator', arguments: { expression: '2+2' } }],
      dialect: 'archon',
    });
    expect(parseTextReply('Action: {"name": "calculator", "arguments": {"expression": "1"}}')).toMatchObject({ kind: 'action', calls: [{ tool: 'calculator' }] });
  });

  it('reads a Final Answer', () => {
    expect(parseTextReply('Thought: done.\nFinal Answer: 20% of 50 is 10.')).toEqual({ kind: 'final', answer: '20% of 50 is 10.' });
  });

  it('takes whichever comes first when a model writes both', () => {
    expect(parseTextReply('Action: {"tool": "calculator", "arguments": {}}\nObservation: 4\nFinal Answer: 4').kind).toBe('action');
  });

  it.each([
    ['I think the answer is 4.', /neither an Action nor a Final Answer/],
    ['Action: calculator 2+2', /no JSON object/],
    ['Action: {"arguments": {}}', /must be \{"tool"/],
  ])('explains what was wrong with %j', (text, error) => {
    const reply = parseTextReply(text);
    expect(reply.kind).toBe('invalid');
    if (reply.kind === 'invalid') expect(reply.error).toMatch(error);
  });

  it("reads a call in the model's own dialect, for offered tools only", () => {
    const text = 'I will compute it. <|tool_call_start|>[calculator(expression="6*7")]<|tool_call_end|>';
    expect(parseTextReply(text, { tools })).toEqual({ kind: 'action', calls: [{ tool: 'calculator', arguments: { expression: '6*7' } }], dialect: 'lfm2' });
    expect(parseTextReply(text, { tools: [tool('read_file')] }).kind).toBe('invalid');
  });

  it('finds a call written in the reasoning field', () => {
    expect(parseTextReply('', { tools, reasoning: '<tool_call>{"name": "calculator", "arguments": {"expression": "6*7"}}</tool_call>' })).toMatchObject({ kind: 'action', dialect: 'hermes' });
  });

  it("takes plain text as the answer once the model has shown its own dialect, and not before", () => {
    expect(parseTextReply('<think>done</think>6*7 = 42', { tools, dialect: 'hermes' })).toEqual({ kind: 'final', answer: '6*7 = 42' });
    expect(parseTextReply('6*7 = 42', { tools, dialect: 'archon' }).kind).toBe('invalid');
    expect(parseTextReply('6*7 = 42', { tools }).kind).toBe('invalid');
  });

  it('lists the tools with their argument schemas', () => {
    const text = textProtocolInstructions([{ name: 'calculator', description: 'math', parameters: { type: 'object' } }]);
    expect(text).toContain('- calculator: math');
    expect(text).toContain('Final Answer:');
  });
});
