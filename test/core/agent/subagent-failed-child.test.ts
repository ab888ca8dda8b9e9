import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ArchonError } from '../../../src/shared/errors';
import { planReply, requestText, stepIdOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';

const startEngine = useEngine();

const PARENT_GOAL = 'Write a short report on the capital of France';
const SUB_GOAL = 'Find the capital of France';
const isChild = (request: RecordedRequest) => /^Goal: Find the capital of France$/m.test(requestText(request));

function assistantTurns(request: RecordedRequest): number {
  return (request.body.messages ?? []).filter((message) => message.role === 'assistant').length;
}

describe('a resumed parent whose sub-agent run had already ended failed', () => {
  it('takes the failure as it is: the child is not run again behind a question about the whole run, its side effect happens once', async () => {
    const stop = new AbortController();
    let childRunId = '';
    const engine = await startEngine({
      reply: (request): ScriptedReply => {
          if (request.purpose === 'plan') {
            return isChild(request) ? planReply([{ id: 'lookup', description: 'Mark the ledger, then read the data' }]) : planReply([{ id: 'research', kind: 'subagent', goal: SUB_GOAL }, { id: 'report', description: 'Write the report', dependencies: ['research'] }]);
          }
          if (request.purpose === 'final') return { content: 'Report.' };
          if (stepIdOf(request) !== 'lookup') return { content: `result of ${stepIdOf(request) ?? '?'}` };
          // The mark, then a loop on a file that is not there: the child fails, and its escalation ends it.
          return assistantTurns(request) === 0 ? { toolCalls: [{ name: 'run_command', arguments: { command: 'echo CHILD-lookup >> ledger.txt' } }] } : { toolCalls: [{ name: 'read_file', arguments: { path: 'missing/data.csv' } }] };
        },
    });
    // The parent stops the moment its child has ended failed, before its step took the failure: the state a kill there leaves.
    const unsubscribe = engine.runtime.bus.subscribe((event) => {
      if (childRunId !== '' || !('runId' in event) || event.type !== 'run.failed') return;
      childRunId = event.runId;
      stop.abort(new ArchonError('CANCELLED', 'Stopped by the operator.'));
    });
    const first = await engine.run(PARENT_GOAL, { maxReplans: 0, policy: 'permissive' }, stop.signal);
    unsubscribe();
    expect(first.status).toBe('stopped');
    expect(engine.runtime.store.runs.childRun(first.runId, 'research')).toMatchObject({ id: childRunId, status: 'failed' });
    expect(engine.runtime.store.runs.getSteps(first.runId).find((step) => step.spec.id === 'research')?.status).toBe('stopped');
    const lookups = engine.server.chatRequests.filter((request) => stepIdOf(request) === 'lookup').length;

    const resumed = await engine.resume(first.runId);
    expect(resumed).toMatchObject({ status: 'failed', error: expect.stringMatching(/^Step research could not be completed: subagent_failed: sub-agent run .* ended failed/) });
    expect(engine.server.chatRequests.filter((request) => stepIdOf(request) === 'lookup')).toHaveLength(lookups);
    const db = new Database(join(engine.runtime.dataDir, 'archon.db'), { readonly: true });
    expect(db.prepare("SELECT count(*) AS n FROM approvals WHERE kind = 'resume_run'").get()).toEqual({ n: 0 });
    db.close();
    expect(readFileSync(join(engine.workspace, 'ledger.txt'), 'utf8')).toBe('CHILD-lookup\n');
  });
});
