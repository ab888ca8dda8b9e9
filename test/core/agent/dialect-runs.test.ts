import { describe, expect, it } from 'vitest';
import { FAMILY_WRITERS, observed, speaking, type FamilyWriter } from '../../fixtures/dialects/writers';
import { useEngine } from '../../support/engine';

const startEngine = useEngine();
const GOAL = 'Compute 6*7 with the calculator';

describe.each([
  ['text mode (the server refuses tools)', true],
  ['native mode, the call left as raw text in the content', false],
])('"compute 6*7 with the calculator", every dialect family: %s', (_mode, rejectTools) => {
  it.each(FAMILY_WRITERS.map((writer) => [writer.family, writer] as const))('%s', async (_family, writer) => {
    const engine = await startEngine({ rejectTools, reply: speaking(writer, GOAL) });
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
        if (request.purpose !== 'step' || observed(request) !== null) return speaking(hermes, GOAL)(request);
        return { content: '', reasoning: `The user wants 6*7. ${hermes.call('calculator', { expression: '6*7' })}` };
      },
    });
    expect(await engine.run(GOAL)).toMatchObject({ status: 'completed', answer: expect.stringContaining('42') });
    expect(engine.events.filter((event) => event.type === 'tool.completed')).toMatchObject([{ tool: 'calculator', content: '42' }]);
  });
});

describe('text mode: plain prose after an Observation', () => {
  it("is the step's answer, not a reply to send back", async () => {
    const archon = FAMILY_WRITERS.find((writer) => writer.dialect === 'archon') as FamilyWriter;
    const engine = await startEngine({
      rejectTools: true,
      reply: (request) => {
        if (request.purpose !== 'step' || observed(request) === null) return speaking(archon, GOAL)(request);
        return { content: `The calculator gave ${observed(request)}.` };
      },
    });
    expect(await engine.run(GOAL)).toMatchObject({ status: 'completed', answer: expect.stringContaining('42') });
    const stepRequests = engine.server.chatRequests.filter((request) => request.purpose === 'step');
    expect(stepRequests).toHaveLength(2);
    expect(JSON.stringify(stepRequests.map((request) => request.body.messages))).not.toContain('neither an Action nor a Final Answer');
  });
});
