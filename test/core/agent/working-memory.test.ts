import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planReply, requestText, stepIdOf, toolMessagesOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { contextTaken, summarisedTurns } from '../../support/context-size';
import { useEngine } from '../../support/engine';

const startEngine = useEngine();

const CONTEXT = 4096;
const TOOL_TURNS = 30;
/** Said at the end of the first file, past what the context window's last-resort cutting would leave of it. */
const FIRST_FACTS = 'Invoice 48213 is filed at /srv/archive/ledger-7.csv.';

/** Files of ~900 characters each; the first ends with the facts the note must keep. */
function writeFiles(workspace: string): void {
  mkdirSync(join(workspace, 'data'));
  for (let index = 0; index < TOOL_TURNS; index++) {
    const filler = `FILE-${index} ` + 'lorem ipsum dolor sit amet '.repeat(33);
    writeFileSync(join(workspace, 'data', `f${index}.txt`), index === 0 ? `${filler}\n${FIRST_FACTS}` : filler);
  }
}

/** Reads one file a turn, then answers; the summariser loses every fact, so only Archon's check keeps them. */
function script(): (request: RecordedRequest) => ScriptedReply {
  let turn = 0;
  return (request) => {
    if (request.purpose === 'plan') return planReply([{ id: 'survey', description: 'Read every data file', expected_output: 'what the files say' }, { id: 'report', description: 'Report on the survey', dependencies: ['survey'] }]);
    if (request.purpose === 'summary') return { content: 'The step read data files full of filler text.' };
    if (request.purpose === 'final') return { content: 'done' };
    if (stepIdOf(request) === 'report') return { content: 'reported' };
    return turn < TOOL_TURNS ? { toolCalls: [{ name: 'read_file', arguments: { path: `data/f${turn++}.txt` } }] } : { content: `read ${turn} files` };
  };
}

describe('working memory: compaction within a small context (real openai client)', () => {
  it('a step of 30 tool turns completes in a 4,096-token context; the note keeps a number and a path of the first turn', async () => {
    const engine = await startEngine({ reply: script(), llamaCpp: { contextLength: CONTEXT, slots: 1 } });
    writeFiles(engine.workspace);
    const result = await engine.run('Survey the data files', { maxIterations: 40 });
    expect(result).toMatchObject({ status: 'completed' });

    const requests = engine.server.chatRequests;
    for (const request of requests) expect(contextTaken(request, CONTEXT), `${request.purpose} request`).toBeLessThanOrEqual(CONTEXT);
    const steps = requests.filter((request) => request.purpose === 'step' && stepIdOf(request) === 'survey');
    expect(steps).toHaveLength(TOOL_TURNS + 1);
    // Compaction keeps the history in its share: the last-resort cutting of observations is never needed.
    for (const request of steps) expect(requestText(request)).not.toContain('[truncated by Archon');

    const compactions = engine.events.filter((event) => event.type === 'memory.compacted');
    expect(compactions.length).toBeGreaterThan(1);
    expect(requests.filter((request) => request.purpose === 'summary')).toHaveLength(compactions.length);
    expect(compactions[0]).toMatchObject({ stepId: 'survey', pointer: expect.stringMatching(/^step_turns:.+\/survey#1@2-\d+$/) });
    for (const event of compactions) if (event.type === 'memory.compacted') expect(event.tokensAfter).toBeLessThan(event.tokensBefore);

    // The last request no longer has the first turn, only the note, which kept its number and path.
    const last = steps.at(-1) as RecordedRequest;
    expect(toolMessagesOf(last).some((message) => message.startsWith('FILE-0 '))).toBe(false);
    expect(requestText(last)).toContain("Summary of this step's earlier turns");
    expect(requestText(last)).toContain('48213');
    expect(requestText(last)).toContain('/srv/archive/ledger-7.csv');

    // No turn is summarised twice: each file's raw text goes to the summariser at most once.
    const summaries = requests.filter((request) => request.purpose === 'summary').map(summarisedTurns);
    for (let index = 0; index < TOOL_TURNS; index++) expect(summaries.filter((text) => text.includes(`FILE-${index} `)).length).toBeLessThanOrEqual(1);

    // The facts reach the dependent step through the run's working memory.
    const report = requests.find((request) => request.purpose === 'step' && stepIdOf(request) === 'report') as RecordedRequest;
    expect(requestText(report)).toMatch(/Facts those steps kept \(working memory\):\n- survey: .*\/srv\/archive\/ledger-7\.csv.*48213/);
    // A completed run's working memory is cleared.
    expect(engine.runtime.store.runs.facts(result.runId).size).toBe(0);
  });

  it('leaves the conversation whole when the context is unknown', async () => {
    const engine = await startEngine({ reply: script() });
    writeFiles(engine.workspace);
    expect(await engine.run('Survey the data files', { maxIterations: 40 })).toMatchObject({ status: 'completed' });
    expect(engine.server.chatRequests.some((request) => request.purpose === 'summary')).toBe(false);
    expect(toolMessagesOf(engine.server.chatRequests.filter((request) => request.purpose === 'step' && stepIdOf(request) === 'survey').at(-1) as RecordedRequest)).toHaveLength(TOOL_TURNS);
  });
});
