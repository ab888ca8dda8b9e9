import { describe, expect, it } from 'vitest';
import { requestText, toolMessagesOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { FAMILY_WRITERS, type FamilyWriter } from '../../fixtures/dialects/writers';
import { useEngine } from '../../support/engine';

const startEngine = useEngine();
const GOAL = 'Compute 6*7 with the calculator';
const PLAN = { goal: GOAL, steps: [{ id: 'compute', description: 'Compute 6*7 with the calculator', dependencies: [] }] };

/** What the step was told the calculator gave: a tool message (native) or an Observation (text mode). */
function observed(request: RecordedRequest): string | null {
  return toolMessagesOf(request)[0] ?? /Observation: (\S+)/.exec(requestText(request))?.[1] ?? null;
}

/** A server playing a model that writes every call (the plan's and the step's) in one family's dialect, and never switches. */
function speaking(writer: FamilyWriter) {
  const say = (text: string) => writer.answer?.(text) ?? text;
  return (request: RecordedRequest): ScriptedReply => {
    if (request.purpose === 'plan') return { content: writer.call('submit_plan', PLAN) };
    if (request.purpose === 'final') return { content: say(requestText(request).includes('The calculator gave 42') ? 'The answer is 42.' : 'I do not know.') };
    const result = observed(request);
    return { content: result === null ? writer.call('calculator', { expression: '6*7' }) : say(`The calculator gave ${result}.`) };
  };
}

describe.each([
  ['text mode (the server refuses tools)', true],
  ['native mode, the call left as raw text in the content', false],
])('"compute 6*7 with the calculator", every dialect family: %s', (_mode, rejectTools) => {
  it.each(FAMILY_WRITERS.map((writer) => [writer.family, writer] as const))('%s', async (_family, writer) => {
    const engine = await startEngine({ rejectTools, reply: speaking(writer) });
    const result = await engine.run(GOAL);
    expect(result).toMatchObject({ status: 'completed', answer: expect.stringContaining('42') });
    expect(engine.events.filter((event) => event.type === 'tool.completed')).toMatchObject([{ tool: 'calculator', status: 'success', content: '42' }]);
    expect(engine.events.filter((event) => event.type === 'model.dialect_detected')).toMatchObject([{ dialect: writer.dialect }]);
    expect(engine.server.chatRequests.every((request) => (request.body.tools !== undefined) === (!rejectTools && request.purpose !== 'final'))).toBe(true);
  });
});

describe('a call written only in the reasoning field (native mode)', () => {
  it('is a call, and the step goes on to its result', async () => {
    const hermes = FAMILY_WRITERS.find((writer) => writer.dialect === 'hermes') as FamilyWriter;
    const engine = await startEngine({
      reply: (request) => {
        if (request.purpose !== 'step' || observed(request) !== null) return speaking(hermes)(request);
        return { content: '', reasoning: `The user wants 6*7. ${hermes.call('calculator', { expression: '6*7' })}` };
      },
    });
    expect(await engine.run(GOAL)).toMatchObject({ status: 'completed', answer: expect.stringContaining('42') });
    expect(engine.events.filter((event) => event.type === 'tool.completed')).toMatchObject([{ tool: 'calculator', content: '42' }]);
  });
});
