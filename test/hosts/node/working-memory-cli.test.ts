import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { requestText, stepIdOf, type RecordedRequest, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { contextTaken } from '../../support/context-size';
import { onlyRunId } from '../../support/crash-scenario';
import { useModelServers } from '../../support/model-servers';
import { useTempDirs } from '../../support/temp-dir';
import { CONTEXT, surveyScript, timesSummarised, writeSurveyFiles } from '../../support/working-memory-scenario';

const tempDir = useTempDirs();
const serve = useModelServers();

/** The survey turn at which the first process is killed: well after its first compactions. */
const KILL_AT_TURN = 14;

function eventsOf(stdout: string): RunEvent[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => RunEventSchema.parse(JSON.parse(line)));
}

function flags(server: ScriptedModelServer, dataDir: string, workspace: string): string[] {
  return ['--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--approve', 'auto', '--max-iterations', '40', '--json'];
}

const isSurvey = (request: RecordedRequest) => request.purpose === 'step' && stepIdOf(request) === 'survey';

describe('archon resume after kill -9 in a compacted step', () => {
  it('continues from the compacted conversation: the same note and turns are sent again, nothing is summarised twice, the facts survive', async () => {
    let first: ChildProcess | null = null;
    let killedRequest: RecordedRequest | null = null;
    const server = await serve({
      llamaCpp: { contextLength: CONTEXT, slots: 1 },
      reply: surveyScript((request, turn) => {
        if (turn !== KILL_AT_TURN || killedRequest) return null;
        killedRequest = request;
        first?.kill('SIGKILL');
        return { hang: true };
      }),
    });
    const [dataDir, workspace] = [tempDir(), tempDir()];
    writeSurveyFiles(workspace);
    const run = spawnArchon(['run', 'Survey the data files', ...flags(server, dataDir, workspace)], { OPENAI_API_KEY: '' });
    first = run.child;
    const killed = await run.done;
    expect(killed.status).toBeNull();
    expect(eventsOf(killed.stdout).filter((event) => event.type === 'memory.compacted').length).toBeGreaterThan(0);
    const atKill = server.chatRequests.length;

    const runId = onlyRunId(dataDir) as string;
    const resumed = await spawnArchon(['resume', runId, ...flags(server, dataDir, workspace)], { OPENAI_API_KEY: '' }).done;
    expect(resumed.status, resumed.stderr).toBe(0);

    // The first thing the resumed process sends is the interrupted request itself: the compacted conversation, not a new summary.
    const afterResume = server.chatRequests.slice(atKill);
    expect(afterResume[0]?.purpose).toBe('step');
    expect(afterResume[0]?.body.messages).toEqual((killedRequest as RecordedRequest | null)?.body.messages);
    expect(requestText(afterResume[0] as RecordedRequest)).toContain("Summary of this step's earlier turns");
    expect(timesSummarised(server.chatRequests).every((times) => times <= 1)).toBe(true);
    expect(eventsOf(resumed.stdout).some((event) => event.type === 'memory.compacted')).toBe(true);

    for (const request of server.chatRequests) expect(contextTaken(request, CONTEXT)).toBeLessThanOrEqual(CONTEXT);
    const last = server.chatRequests.filter(isSurvey).at(-1) as RecordedRequest;
    expect(requestText(last)).toContain('48213');
    expect(requestText(last)).toContain('/srv/archive/ledger-7.csv');
    expect(eventsOf(resumed.stdout).at(-1)).toMatchObject({ type: 'run.completed' });
  }, 120_000);
});
