import { describe, expect, it } from 'vitest';
import { planReply, requestText, stepIdOf, toolMessagesOf, type RecordedRequest } from '../../kit/scripted-model-server';
import { contextTaken } from '../../support/context-size';
import { useEngine, type EngineHarness } from '../../support/engine';
import { useModelServers } from '../../support/model-servers';
import { useRuntimes } from '../../support/runtime';
import { endWorkingMemory, factKey } from '../../../src/core/memory/working-memory';
import type { RunContext } from '../../../src/core/run/run-context';
import { CONTEXT, surveyScript, timesSummarised, TOOL_TURNS, writeSurveyFiles } from '../../support/working-memory-scenario';

const startEngine = useEngine();
const modelServer = useModelServers();

describe('working memory: compaction within a small context (real openai client)', () => {
  it('a step of 30 tool turns completes in a 4,096-token context; the note keeps a number and a path of the first turn', async () => {
    const engine = await startEngine({ reply: surveyScript(), llamaCpp: { contextLength: CONTEXT, slots: 1 } });
    writeSurveyFiles(engine.workspace);
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
    expect(timesSummarised(requests).every((times) => times <= 1)).toBe(true);

    // The facts reach the dependent step through the run's working memory.
    const report = requests.find((request) => request.purpose === 'step' && stepIdOf(request) === 'report') as RecordedRequest;
    expect(requestText(report)).toMatch(/Facts those steps kept \(working memory\):\n- survey: .*\/srv\/archive\/ledger-7\.csv.*48213/);
    // A completed run's working memory is cleared.
    expect(engine.runtime.store.runs.facts(result.runId).size).toBe(0);
  });

  it("keeps step results and kept facts by key during the run, promotes the facts to long-term memory when it completes, then clears it; not for a run without memory", async () => {
    const kept: Map<string, string>[] = [];
    const survey = surveyScript();
    const engine: EngineHarness = await startEngine(
      {
        llamaCpp: { contextLength: CONTEXT, slots: 1 },
        reply: (request) => {
          // What the run's working memory holds before its ending clears it.
          if (request.purpose === 'final') kept.push(engine.runtime.store.runs.facts(engine.events[0]?.runId ?? ''));
          return survey(request);
        },
      },
      { memory: true },
    );
    writeSurveyFiles(engine.workspace);
    const result = await engine.run('Survey the data files', { maxIterations: 40 });
    expect(result.status).toBe('completed');
    const facts = kept[0] as Map<string, string>;
    expect([...facts.keys()]).toEqual([factKey.result('report'), factKey.facts('survey'), factKey.result('survey')]);
    expect(facts.get(factKey.result('survey'))).toBe(`read ${TOOL_TURNS} files`);
    expect(JSON.parse(facts.get(factKey.facts('survey')) ?? '[]')).toEqual(expect.arrayContaining(['48213', '/srv/archive/ledger-7.csv', 'data/f0.txt']));
    expect(engine.runtime.store.runs.facts(result.runId).size).toBe(0);
    const promoted = engine.runtime.store.memory.list({ kind: 'fact', limit: 50 }).filter((item) => item.text.includes('Facts kept:'));
    expect(promoted).toEqual([expect.objectContaining({ source: { runId: result.runId, stepId: 'survey' }, text: expect.stringMatching(/^Read every data file\nFacts kept: .*\/srv\/archive\/ledger-7\.csv.*48213/) })]);

    const without = await engine.run('Survey the data files again', { maxIterations: 40, memory: false });
    expect(without.status).toBe('completed');
    expect(engine.runtime.store.memory.list({ kind: 'fact', limit: 50 }).filter((item) => item.source?.runId === without.runId)).toEqual([]);
    expect(engine.runtime.store.runs.facts(without.runId).size).toBe(0);
  });

  it('blanks a known secret out of everything memory keeps: compaction notes, working memory, facts and the episode', async () => {
    const secret = 'sk-archon-test-0123456789';
    let kept = new Map<string, string>();
    const survey = surveyScript((_request, turn) => (turn === TOOL_TURNS ? { content: `read ${turn} files with key ${secret}` } : null));
    const engine: EngineHarness = await startEngine(
      {
        llamaCpp: { contextLength: CONTEXT, slots: 1 },
        reply: (request) => {
          if (request.purpose === 'final') kept = engine.runtime.store.runs.facts(engine.events[0]?.runId ?? '');
          if (request.purpose === 'summary') return { content: `The step read data files; the key is ${secret}.` };
          return survey(request);
        },
      },
      { memory: true },
    );
    engine.runtime.store.secrets.add(secret);
    writeSurveyFiles(engine.workspace);
    const result = await engine.run('Survey the data files', { maxIterations: 40 });
    expect(result.status).toBe('completed');
    const notes = engine.runtime.store.db.prepare('SELECT note FROM step_compactions').all() as { note: string }[];
    const memories = engine.runtime.store.memory.list({ limit: 100 });
    expect(notes.length).toBeGreaterThan(0);
    expect(memories.map((item) => item.kind)).toEqual(expect.arrayContaining(['fact', 'episode']));
    const stored = [...notes.map((row) => row.note), ...kept.values(), ...memories.map((item) => item.text)];
    for (const text of stored) expect(text).not.toContain(secret);
    expect(notes[0]?.note).toContain('[redacted]');
    expect(kept.get(factKey.result('survey'))).toBe(`read ${TOOL_TURNS} files with key [redacted]`);
    expect(memories.filter((item) => item.text.includes('[redacted]')).map((item) => item.kind)).toEqual(expect.arrayContaining(['fact', 'episode']));
  });

  it('goes on without compaction when the summary call fails: the step completes, the context window cuts instead, one summary asked', async () => {
    // Fewer turns than the 30 compaction carries: cutting alone cannot keep 30 in the context.
    const survey = surveyScript((_request, turn) => (turn === 12 ? { content: 'read 12 files' } : null));
    const engine = await startEngine({
      llamaCpp: { contextLength: CONTEXT, slots: 1 },
      reply: (request) => (request.purpose === 'summary' ? { status: 400, message: 'the summariser refuses' } : survey(request)),
    });
    writeSurveyFiles(engine.workspace);
    const result = await engine.run('Survey the data files', { maxIterations: 40 });
    expect(result.status).toBe('completed');
    expect(engine.events.some((event) => event.type === 'memory.compacted')).toBe(false);
    expect(engine.server.chatRequests.filter((request) => request.purpose === 'summary')).toHaveLength(1);
    for (const request of engine.server.chatRequests) expect(contextTaken(request, CONTEXT), `${request.purpose} request`).toBeLessThanOrEqual(CONTEXT);
  });

  it("compacts a step within the context of its role's server, not the run's own", async () => {
    const surveyor = await modelServer({ reply: surveyScript(), llamaCpp: { contextLength: CONTEXT, slots: 1 } });
    // The run's own server (the executor's) reports no context: left to it, the step would never be compacted.
    const survey = surveyScript();
    const engine = await startEngine({
      reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'survey', description: 'Read every data file', role: 'surveyor' }, { id: 'report', description: 'Report on the survey', dependencies: ['survey'] }]) : survey(request)),
    });
    writeSurveyFiles(engine.workspace);
    const result = await engine.run('Survey the data files', { maxIterations: 40, roles: { surveyor: { description: 'Reads files', tools: 'all', model: { url: surveyor.url, name: 'scripted-model' } } } });
    expect(result.status).toBe('completed');
    expect(surveyor.chatRequests.filter((request) => request.purpose === 'step').map(stepIdOf)).toContain('survey');
    expect(engine.events.filter((event) => event.type === 'memory.compacted').length).toBeGreaterThan(1);
    expect(surveyor.chatRequests.some((request) => request.purpose === 'summary')).toBe(true);
    for (const request of surveyor.chatRequests) expect(contextTaken(request, CONTEXT), `${request.purpose} request`).toBeLessThanOrEqual(CONTEXT);
  });

  it('leaves the conversation whole when the context is unknown', async () => {
    const engine = await startEngine({ reply: surveyScript() });
    writeSurveyFiles(engine.workspace);
    expect(await engine.run('Survey the data files', { maxIterations: 40 })).toMatchObject({ status: 'completed' });
    expect(engine.server.chatRequests.some((request) => request.purpose === 'summary')).toBe(false);
    expect(toolMessagesOf(engine.server.chatRequests.filter((request) => request.purpose === 'step' && stepIdOf(request) === 'survey').at(-1) as RecordedRequest)).toHaveLength(TOOL_TURNS);
  });
});

describe('the run-scoped key-value store', () => {
  const openRuntime = useRuntimes();

  it('keeps one value a key, and outlives every ending a run can be resumed from', () => {
    const runs = openRuntime().store.runs;
    runs.createRun({ id: 'r', goal: 'g', policy: 'balanced', options: { modelUrl: 'http://127.0.0.1:1/v1', model: 'm', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: '/tmp', maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 }, now: '2026-11-23T00:00:00.000Z' });
    runs.putFact('r', 'step:a:result', 'first', '2026-11-23T00:00:00.000Z');
    runs.putFact('r', 'step:a:result', 'second', '2026-11-23T00:00:01.000Z');
    const context = { runId: 'r', runs, memory: null } as unknown as RunContext;
    for (const status of ['failed', 'stopped', 'paused', 'budget_exhausted'] as const) endWorkingMemory(context, status);
    expect([...runs.facts('r')]).toEqual([['step:a:result', 'second']]);
    endWorkingMemory(context, 'rejected');
    expect(runs.facts('r').size).toBe(0);
  });
});
