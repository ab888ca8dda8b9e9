import { describe, expect, it } from 'vitest';
import type { ArchonRuntime } from '../../../src/core/runtime';
import { rowDigest } from '../../../src/core/store/run-rows';
import { ArchonError } from '../../../src/shared/errors';
import { planReply, requestText, stepIdOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';
import { useRuntimes } from '../../support/runtime';

const engine = useEngine();
const openRuntime = useRuntimes();

/** Two steps: one writes a file (a file effect for undo), the other runs a command; both report. */
function twoSteps(request: RecordedRequest): ScriptedReply {
  if (request.purpose === 'plan') {
    return planReply([
      { id: 'write', description: 'Write notes.txt', expected_output: 'written' },
      { id: 'count', description: 'Count the files', expected_output: 'counted', dependencies: ['write'] },
    ]);
  }
  if (request.purpose === 'final') return { content: 'Notes written and files counted.' };
  if (request.body.messages?.at(-1)?.role === 'tool') return { content: `${stepIdOf(request) ?? 'step'} done.` };
  return stepIdOf(request) === 'write' ? { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'hello' } }] } : { toolCalls: [{ name: 'run_command', arguments: { command: 'ls | wc -l' } }] };
}

/** What a data dir holds of a run, table by table, without what is numbered or belongs to one machine. */
function stateOf(runtime: ArchonRuntime, runId: string): Record<string, unknown[]> {
  const select = (sql: string) => runtime.store.db.prepare(sql).all(runId);
  return {
    run: select('SELECT id, goal, status, policy, options_json, answer, error, created_at, updated_at, follow_up_of, kind FROM runs WHERE id = ?'),
    steps: select('SELECT * FROM steps WHERE run_id = ? ORDER BY id'),
    events: select('SELECT * FROM events WHERE run_id = ? ORDER BY seq'),
    modelCalls: select('SELECT * FROM model_calls WHERE run_id = ? ORDER BY id'),
    toolCalls: select('SELECT * FROM tool_calls WHERE run_id = ? ORDER BY id'),
    ledger: select('SELECT kind, tokens, cost_usd, ts FROM budget_ledger WHERE run_id = ? ORDER BY id'),
    turns: select('SELECT * FROM step_turns WHERE run_id = ? ORDER BY step_id, attempt, position'),
    facts: select('SELECT * FROM run_facts WHERE run_id = ? ORDER BY key'),
    effects: select('SELECT call_id, path, existed, previous, previous_sha256, new_sha256, undone_at, previous_withheld FROM file_effects WHERE run_id = ? ORDER BY seq'),
    bus: select('SELECT id, topic, topic_seq, correlation_id, from_agent, to_agent, kind, body, ts FROM bus_messages WHERE run_id = ? ORDER BY seq'),
  };
}

describe("a run's state carried to another data dir as rows", () => {
  it('lands whole on the other data dir: every table, the events and the spend, read back as the same rows', async () => {
    const harness = await engine({ reply: twoSteps });
    const result = await harness.run('write notes and count the files');
    expect(result.status).toBe('completed');
    const rows = harness.runtime.store.runs.rows.read(result.runId);
    const events = harness.runtime.store.runs.events(result.runId);
    // Something of every kind the run wrote is carried.
    expect([...new Set(rows.map((row) => row.table))]).toEqual(expect.arrayContaining(['runs', 'steps', 'model_calls', 'tool_calls', 'budget_ledger', 'step_turns', 'file_effects']));

    const other = openRuntime();
    // A run of the other data dir's own first, so the numbers the tables give differ from the first data dir's.
    const own = await harness.run('write notes and count the files');
    const ownRows = harness.runtime.store.runs.rows.read(own.runId);
    other.store.runs.rows.adopt(own.runId, ownRows, harness.runtime.store.runs.events(own.runId));
    other.store.runs.rows.adopt(result.runId, rows, events);

    expect(stateOf(other, result.runId)).toEqual(stateOf(harness.runtime, result.runId));
    expect(other.store.runs.getRun(result.runId)?.summary).toEqual(harness.runtime.store.runs.getRun(result.runId)?.summary);
    expect(other.store.runs.spending(result.runId, '1970-01-01T00:00:00.000Z')).toEqual(harness.runtime.store.runs.spending(result.runId, '1970-01-01T00:00:00.000Z'));
    // Read back there, the rows are those sent: nothing is sent again.
    expect(other.store.runs.rows.read(result.runId).map(rowDigest)).toEqual(rows.map(rowDigest));
  });

  it("carries a sub-agent's run with the run above it, its events as rows", async () => {
    const reply = (request: RecordedRequest): ScriptedReply => {
      const child = requestText(request).includes('Goal: Find the capital');
      if (request.purpose === 'plan') return child ? planReply([{ id: 'lookup', description: 'Look it up' }]) : planReply([{ id: 'research', kind: 'subagent', goal: 'Find the capital of France' }]);
      if (request.purpose === 'final') return { content: child ? 'Paris.' : 'The capital is Paris.' };
      return { content: 'Paris is the capital.' };
    };
    const harness = await engine({ reply });
    const result = await harness.run('Report the capital of France');
    expect(result.status).toBe('completed');
    const childId = harness.runtime.store.runs.childRun(result.runId, 'research')?.id as string;
    expect(childId).toBeDefined();
    const rows = harness.runtime.store.runs.rows.read(result.runId);
    expect(rows.filter((row) => row.table === 'events').length).toBe(harness.runtime.store.runs.events(childId).length);

    const other = openRuntime();
    other.store.runs.rows.adopt(result.runId, rows, harness.runtime.store.runs.events(result.runId));
    for (const runId of [result.runId, childId]) expect(stateOf(other, runId)).toEqual(stateOf(harness.runtime, runId));
    expect(other.store.runs.childRun(result.runId, 'research')?.id).toBe(childId);
  });

  it('does not overwrite a run the data dir holds, nor take a column it does not know or a row of a run not sent, and takes nothing then', async () => {
    const harness = await engine({ reply: twoSteps });
    const { runId } = await harness.run('write notes and count the files');
    const rows = harness.runtime.store.runs.rows.read(runId);
    const events = harness.runtime.store.runs.events(runId);
    const codeOf = (take: () => void) => {
      try {
        take();
        return null;
      } catch (error) {
        return ArchonError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);
      }
    };
    expect(codeOf(() => harness.runtime.store.runs.rows.adopt(runId, rows, events))).toMatch(/^CONFIG_INVALID: Run .* is already on this data dir/);

    const other = openRuntime();
    const withColumn = rows.map((row) => (row.table === 'steps' ? { ...row, values: { ...row.values, lease_pid: 1 } } : row));
    expect(codeOf(() => other.store.runs.rows.adopt(runId, withColumn, events))).toMatch(/^CONFIG_INVALID: A run's steps came with a column lease_pid this Archon does not carry/);
    const ofAnother = rows.map((row) => (row.table === 'tool_calls' ? { ...row, values: { ...row.values, run_id: 'not-sent' } } : row));
    expect(codeOf(() => other.store.runs.rows.adopt(runId, ofAnother, events))).toMatch(/^CONFIG_INVALID: A row of tool_calls names a run \(not-sent\) that was not sent with it/);
    expect(codeOf(() => other.store.runs.rows.adopt(runId, rows.filter((row) => row.table !== 'runs'), events))).toMatch(/do not hold the run itself/);
    expect(other.store.runs.getRun(runId)).toBeNull();
    expect(other.store.runs.events(runId)).toEqual([]);
  });
});
