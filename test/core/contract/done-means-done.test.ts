import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ApprovalChannel } from '../../../src/core/approval/approval-channel';
import type { ApprovalDecision, ApprovalRequest } from '../../../src/shared/schemas/approval';
import type { RunEvent } from '../../../src/shared/schemas/events';
import { planReply, requestText, stepIdOf, toolMessagesOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine, type EngineHarness } from '../../support/engine';

const startEngine = useEngine();

/** A person at the desk who answers each request by `answer` and keeps what was asked. */
function desk(answer: (request: ApprovalRequest) => ApprovalDecision): ApprovalChannel & { asked: ApprovalRequest[] } {
  const asked: ApprovalRequest[] = [];
  return { asked, canRaiseBudgets: true, channel: 'app', decide: async (request) => (asked.push(request), answer(request)) };
}

const approveAllButOutcome = (outcome: ApprovalDecision) => desk((request) => (request.kind === 'outcome' ? outcome : { verdict: 'approve' }));

function eventsOf<T extends RunEvent['type']>(events: readonly RunEvent[], type: T): Extract<RunEvent, { type: T }>[] {
  return events.filter((event): event is Extract<RunEvent, { type: T }> => event.type === type);
}

/** The step's turns in order: each reply is the step's next turn (the last one repeats). */
function stepTurns(...turns: ScriptedReply[]): (request: RecordedRequest) => ScriptedReply {
  const count = new Map<string, number>();
  return (request) => {
    const id = stepIdOf(request) ?? '?';
    const turn = count.get(id) ?? 0;
    count.set(id, turn + 1);
    return turns[Math.min(turn, turns.length - 1)] as ScriptedReply;
  };
}

function memoryTexts(engine: EngineHarness): string[] {
  return engine.runtime.store.memory.list({ limit: 100 }).map((item) => item.text);
}

const writeNotes: ScriptedReply = { toolCalls: [{ name: 'write_file', arguments: { path: 'NOTES.md', content: '# Notes\n' } }] };
const falseClaim: ScriptedReply = { content: 'I wrote NOTES.md with the summary.' };

describe('acceptance on evidence, by default', () => {
  it('a step claiming a file it never wrote is told why, writes it, and the run completes with the file', async () => {
    const step = stepTurns(falseClaim, writeNotes, { content: 'NOTES.md is written.' });
    const engine = await startEngine(
      { reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'notes', description: 'Write NOTES.md summarising the project' }]) : request.purpose === 'final' ? { content: 'NOTES.md holds the notes.' } : step(request)) },
      { memory: true },
    );
    const result = await engine.run('Write NOTES.md summarising the project');
    expect(result.status).toBe('completed');
    expect(readFileSync(join(engine.workspace, 'NOTES.md'), 'utf8')).toBe('# Notes\n');
    const repair = engine.server.chatRequests.filter((request) => request.purpose === 'step')[1] as RecordedRequest;
    expect(requestText(repair)).toMatch(/the result says it wrote NOTES\.md, but no write of NOTES\.md was recorded/);
    expect(eventsOf(engine.events, 'step.retried')).toHaveLength(1);
    expect(result.answer).toContain('NOTES.md written by write_file (step notes)');
    expect(memoryTexts(engine).join('\n')).not.toContain('I wrote NOTES.md');
  });

  it('a step that never writes the file it claims fails; the run does not end completed and memory keeps nothing of the claim', async () => {
    const engine = await startEngine(
      { reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'notes', description: 'Summarise the project in NOTES.md' }]) : request.purpose === 'final' ? { content: 'Done.' } : falseClaim) },
      { memory: true },
    );
    const result = await engine.run('Summarise the project', { maxReplans: 0 });
    expect(result.status).not.toBe('completed');
    expect(result.status).not.toBe('completed_with_gaps');
    expect(existsSync(join(engine.workspace, 'NOTES.md'))).toBe(false);
    const [failed] = eventsOf(engine.events, 'step.failed');
    expect(failed?.reason).toMatch(/says it wrote NOTES\.md, but no write of NOTES\.md was recorded/);
    expect(memoryTexts(engine).join('\n')).not.toContain('I wrote NOTES.md');
  });

  it('a claimed command is checked against the journal: one never run is a failed check', async () => {
    const step = stepTurns({ content: 'I ran `npm test` and it passed.' }, { toolCalls: [{ name: 'run_command', arguments: { command: 'npm test' } }] }, { content: 'The tests could not run: npm test failed.' });
    const engine = await startEngine({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'test', description: 'run the tests' }]) : request.purpose === 'final' ? { content: 'Tests could not run.' } : step(request)) });
    await engine.run('run the tests');
    const [validation] = eventsOf(engine.events, 'validation.completed').filter((event) => event.stepId === 'test');
    expect(validation?.checks).toContainEqual(expect.objectContaining({ name: 'commands_ran', passed: false, detail: expect.stringContaining('`npm test` was never run') }));
  });
});

describe('the goal contract and the outcome check', () => {
  const twoFiles = 'Write CHANGELOG.md and SUMMARY.md for the release.';
  const onlyChangelog = () => planReply([{ id: 'log', description: 'Write CHANGELOG.md', expected_output: 'the changelog written' }]);
  /** A release run's model: the plan writes only the changelog, whose step writes it and says so; `final` is the answer. */
  const release = (final = 'Written.', others: (request: RecordedRequest) => ScriptedReply | null = () => null) => {
    const writeChangelog = stepTurns({ toolCalls: [{ name: 'write_file', arguments: { path: 'CHANGELOG.md', content: '- fixes\n' } }] }, { content: 'CHANGELOG.md is written.' });
    return (request: RecordedRequest): ScriptedReply => others(request) ?? (request.purpose === 'plan' ? onlyChangelog() : request.purpose === 'final' ? { content: final } : writeChangelog(request));
  };

  it('states the files a goal names as criteria before planning, and sends a plan that leaves one out back once, saying which', async () => {
    const engine = await startEngine({ reply: release('Both written.') });
    await engine.run(twoFiles);
    const [contract] = eventsOf(engine.events, 'contract.ready');
    expect(contract?.contract.criteria).toEqual([expect.objectContaining({ kind: 'file_written', path: 'CHANGELOG.md', source: 'goal' }), expect.objectContaining({ kind: 'file_written', path: 'SUMMARY.md', source: 'goal' })]);
    const plans = engine.server.chatRequests.filter((request) => request.purpose === 'plan');
    expect(plans).toHaveLength(2);
    expect(requestText(plans[0] as RecordedRequest)).toContain('c2: the file SUMMARY.md is written');
    expect(requestText(plans[1] as RecordedRequest)).toContain('The plan leaves these success criteria of the goal to no step: SUMMARY.md is written.');
  });

  it('a run whose plan writes one of the two files never ends completed: the outcome check names the missing one and --approve auto does not accept it', async () => {
    const engine = await startEngine({ reply: release('Both written.') });
    const result = await engine.run(twoFiles);
    expect(result).toMatchObject({ status: 'failed', error: expect.stringContaining('SUMMARY.md is written: no write of SUMMARY.md was recorded') });
    const [outcome] = eventsOf(engine.events, 'outcome.checked');
    expect(outcome).toMatchObject({ verdict: 'fail', route: 'gaps', criteria: [expect.objectContaining({ id: 'c1', met: true }), expect.objectContaining({ id: 'c2', met: false })] });
    expect(eventsOf(engine.events, 'approval.resolved').at(-1)).toMatchObject({ status: 'rejected', decidedBy: 'rule' });
    expect(eventsOf(engine.events, 'run.completed')).toHaveLength(0);
  });

  it('gaps the operator accepts end the run completed_with_gaps, listed; --accept-gaps accepts them beforehand', async () => {
    const reply = () => release('The changelog is written.');
    const person = approveAllButOutcome({ verdict: 'approve' });
    const engine = await startEngine({ reply: reply() }, { approvals: person });
    const result = await engine.run(twoFiles);
    expect(result.status).toBe('completed_with_gaps');
    expect(person.asked.find((request) => request.kind === 'outcome')?.action).toMatchObject({ gaps: [expect.stringContaining('SUMMARY.md')] });
    expect(eventsOf(engine.events, 'run.completed')).toEqual([expect.objectContaining({ gaps: [expect.stringContaining('SUMMARY.md is written')] })]);
    expect(engine.runtime.store.runs.getRun(result.runId)?.summary.status).toBe('completed_with_gaps');

    const beforehand = await startEngine({ reply: reply() });
    expect((await beforehand.run(twoFiles, { acceptGaps: true })).status).toBe('completed_with_gaps');
    expect(eventsOf(beforehand.events, 'approval.resolved').at(-1)).toMatchObject({ status: 'approved', decidedBy: 'rule' });
  });

  it('a number answer given as prose holding two numbers fails by parsing, is rewritten once, and the run fails if it stays so', async () => {
    const goal = 'How many lines does data.csv have? Answer with just the number.';
    const plan = () => planReply([{ id: 'count', description: 'Count the lines of data.csv' }]);
    let finals = 0;
    const engine = await startEngine({ reply: (request) => (request.purpose === 'plan' ? plan() : request.purpose === 'final' ? (finals++, { content: 'There are 42 lines and 3 columns.' }) : { content: '42 lines' }) });
    const result = await engine.run(goal);
    expect(finals).toBe(2);
    expect(result).toMatchObject({ status: 'failed', error: expect.stringContaining('it holds 2 (42, 3)') });
    const rewrite = engine.server.chatRequests.filter((request) => request.purpose === 'final')[1] as RecordedRequest;
    expect(requestText(rewrite)).toContain('The answer must be one number, and it holds 2 (42, 3)');

    const fixed = await startEngine({ reply: (request) => (request.purpose === 'plan' ? plan() : request.purpose === 'final' ? { content: requestText(request).includes('must be one number') ? '42' : 'There are 42 lines and 3 columns.' } : { content: '42 lines' }) });
    expect(await fixed.run(goal)).toMatchObject({ status: 'completed', answer: '42' });
  });

  it('the critic judges the outcome by default in one call, purpose outcome, with the evidence; it never sees a step conversation', async () => {
    const engine = await startEngine({ reply: release() });
    await engine.run('Write CHANGELOG.md for the release.');
    const outcome = engine.server.requests.filter((request) => request.purpose === 'outcome');
    expect(outcome).toHaveLength(1);
    const text = requestText(outcome[0] as RecordedRequest);
    expect(text).toContain('CHANGELOG.md written by write_file (step log)');
    expect(text).toMatch(/Result to judge:\n⟦data [0-9a-f]{12} from the result to judge⟧\nWritten\.\n⟦\/data [0-9a-f]{12}⟧/);
    expect(outcome[0]?.body.messages?.some((message) => message.role === 'tool')).toBe(false);
  });

  it('the confidence band: a passing verdict at 0.80 goes to a person under balanced, and on without asking under permissive', async () => {
    const unsure = (): ScriptedReply => ({ toolCalls: [{ name: 'submit_verdict', arguments: { verdict: 'pass', gap: 0.1, reason: 'probably fine', confidence: 0.8 } }] });
    const reply = () => release();
    const person = approveAllButOutcome({ verdict: 'reject', feedback: 'not convinced' });
    const balanced = await startEngine({ reply: reply(), outcome: unsure }, { approvals: person });
    expect(await balanced.run('Write CHANGELOG.md for the release.')).toMatchObject({ status: 'failed', error: expect.stringContaining('not convinced') });
    expect(person.asked.find((request) => request.kind === 'outcome')?.summary).toContain('not sure the goal is met (confidence 0.80)');

    const permissive = await startEngine({ reply: reply(), outcome: unsure }, { approvals: person });
    expect((await permissive.run('Write CHANGELOG.md for the release.', { policy: 'permissive' })).status).toBe('completed');
  });

  it('a critic that judges the goal not done is answered with one rewrite; still not done, the run fails naming why', async () => {
    const reply = () => release();
    const failing = (): ScriptedReply => ({ toolCalls: [{ name: 'submit_verdict', arguments: { verdict: 'fail', gap: 0.6, reason: 'the changelog lists no version', confidence: 0.9 } }] });
    const engine = await startEngine({ reply: reply(), outcome: failing });
    const result = await engine.run('Write CHANGELOG.md for the release.');
    expect(result).toMatchObject({ status: 'failed', error: expect.stringContaining('Judged not done: the changelog lists no version') });
    expect(engine.server.requests.filter((request) => request.purpose === 'outcome')).toHaveLength(2);
    expect(requestText(engine.server.chatRequests.filter((request) => request.purpose === 'final')[1] as RecordedRequest)).toContain('the changelog lists no version');
  });

  it('an unreadable outcome verdict is no pass: the deterministic evidence stands and a person decides the rest', async () => {
    const person = approveAllButOutcome({ verdict: 'reject', feedback: 'then I will look myself' });
    const engine = await startEngine({ reply: release(), outcome: () => ({ content: 'looks good to me' }) }, { approvals: person });
    expect(await engine.run('Write CHANGELOG.md for the release.')).toMatchObject({ status: 'failed', error: expect.stringContaining('the outcome could not be judged') });
    expect(eventsOf(engine.events, 'outcome.checked')).toEqual([expect.objectContaining({ confidence: null, route: 'ask', gaps: [], criteria: [expect.objectContaining({ id: 'c1', met: true })] })]);
    expect(person.asked.find((request) => request.kind === 'outcome')?.summary).toContain('no readable verdict');
  });

  it('the operator edits the contract at the plan approval: the edited criteria are announced and checked', async () => {
    const person = desk((request) => (request.kind === 'plan' ? { verdict: 'edit', edited: { steps: (request.action as { steps: unknown[] }).steps, contract: { goal: 'Write the changelog', criteria: [{ id: 'c1', kind: 'file_written', path: 'RELEASE.md', text: 'RELEASE.md is written', source: 'operator' }], deliverables: ['RELEASE.md'], constraints: [], outOfScope: [] } } } : request.kind === 'outcome' ? { verdict: 'reject', feedback: 'no' } : { verdict: 'approve' }));
    const engine = await startEngine({ reply: release() }, { approvals: person });
    const result = await engine.run('Write CHANGELOG.md for the release.');
    expect(eventsOf(engine.events, 'contract.ready').map((event) => event.by)).toEqual(['archon', 'operator']);
    expect(result).toMatchObject({ status: 'failed', error: expect.stringContaining('RELEASE.md is written') });
  });

  it('--verify off states no contract and checks no outcome', async () => {
    const engine = await startEngine({ reply: release('Both written.') });
    expect((await engine.run(twoFiles, { verification: 'off' })).status).toBe('completed');
    expect(eventsOf(engine.events, 'contract.ready')).toHaveLength(0);
    expect(engine.server.requests.filter((request) => request.purpose === 'outcome')).toHaveLength(0);
  });

  it('with --verify critic the model states criteria of its own (purpose contract), joined to those of the words', async () => {
    const contract = (): ScriptedReply => ({ toolCalls: [{ name: 'submit_contract', arguments: { goal: 'A changelog for the release', success_criteria: [{ text: 'CHANGELOG.md is written', file: 'CHANGELOG.md' }, { text: 'the changelog names the version' }], constraints: [], deliverables: [], out_of_scope: ['publishing'] } }] });
    const critic = (): ScriptedReply => ({ toolCalls: [{ name: 'submit_verdict', arguments: { verdict: 'pass', gap: 0, reason: 'fine', confidence: 1 } }] });
    const engine = await startEngine({
      reply: release('Written.', (request) => (request.purpose === 'critic' ? critic() : null)),
      contract,
    });
    expect((await engine.run('Write CHANGELOG.md for the release.', { verification: 'critic' })).status).toBe('completed');
    expect(eventsOf(engine.events, 'contract.ready')[0]?.contract).toMatchObject({
      goal: 'A changelog for the release',
      criteria: [expect.objectContaining({ id: 'c1', path: 'CHANGELOG.md', source: 'goal' }), expect.objectContaining({ id: 'c2', kind: 'judged', text: 'the changelog names the version', source: 'model' })],
      outOfScope: ['publishing'],
    });
    const [outcome] = eventsOf(engine.events, 'outcome.checked');
    expect(outcome?.criteria.find((criterion) => criterion.id === 'c2')).toMatchObject({ met: true });
  });
});

describe('no silent success', () => {
  it('a step that completed while its tool call failed and the result does not say so is repaired, not accepted', async () => {
    const step = stepTurns({ toolCalls: [{ name: 'read_file', arguments: { path: 'missing.txt' } }] }, { content: 'Summary: all good.' }, { content: 'missing.txt could not be read: it does not exist.' });
    const engine = await startEngine({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'read', description: 'read missing.txt' }]) : request.purpose === 'final' ? { content: 'missing.txt does not exist.' } : step(request)) });
    expect((await engine.run('Summarise missing.txt')).status).toBe('completed');
    expect(toolMessagesOf(engine.server.chatRequests.filter((request) => request.purpose === 'step')[1] as RecordedRequest)[0]).toMatch(/^error/);
    expect(eventsOf(engine.events, 'step.retried')).toHaveLength(1);
  });
});
