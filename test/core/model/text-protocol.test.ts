import { describe, expect, it } from 'vitest';
import { parseTextReply, textProtocolInstructions } from '../../../src/core/model/text-protocol';

describe('text protocol', () => {
  it('reads an Action with its JSON, leniently', () => {
    expect(parseTextReply('Thought: I need math.\nAction: {"tool": "calculator", "arguments": {"expression": "2+2",}}')).toEqual({
      kind: 'action',
      tool: 'calculator',
      arguments: { expression: '2+2' },
    });
    expect(parseTextReply('Action: {"name": "calculator", "arguments": {"expression": "1"}}')).toMatchObject({ kind: 'action', tool: 'calculator' });
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

  it('lists the tools with their argument schemas', () => {
    const text = textProtocolInstructions([{ name: 'calculator', description: 'math', parameters: { type: 'object' } }]);
    expect(text).toContain('- calculator: math');
    expect(text).toContain('Final Answer:');
  });
});
