import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { planReply, stepIdOf, toolMessagesOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useModelServers } from '../../support/model-servers';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const modelServer = useModelServers();
const archon = (args: string[]) => spawnArchon(args, { OPENAI_API_KEY: '' });

const ROLE_KEY = 'ROLEKEY-b7f3e9a1';
const PASS: ScriptedReply = { toolCalls: [{ name: 'submit_verdict', arguments: { verdict: 'pass', gap: 0, reason: 'Right.', confidence: 0.99 } }] };

function writeRoles(roles: unknown): string {
  const file = join(tempDir(), 'roles.json');
  writeFileSync(file, JSON.stringify({ roles }));
  return file;
}

function eventsOf(stdout: string): RunEvent[] {
  return stdout.trim().split('\n').map((line) => RunEventSchema.parse(JSON.parse(line)));
}

function databaseBytes(dataDir: string, name: string): Buffer {
  return Buffer.concat(['', '-wal', '-shm'].map((suffix) => join(dataDir, name + suffix)).filter(existsSync).map((file) => readFileSync(file)));
}

const toolNames = (request: RecordedRequest) => (request.body.tools ?? []).map((tool) => tool.function.name).sort();

describe('archon run --roles', () => {
  it('sends the plan and the final answer to the planner’s server, every step and critic call to theirs, a specialist only its tools, and keeps the role’s key out of the store and the events', async () => {
    const serverA = await modelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'sum', description: 'add 2 and 3' }, { id: 'look', description: 'read notes.txt', role: 'reader' }]) : { content: 'The sum is 5 and the notes say hello.' }) });
    const serverB = await modelServer({
      reply: (request) => {
        if (request.purpose === 'critic') return PASS;
        if (stepIdOf(request) === 'look' && toolMessagesOf(request).length === 0) return { toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] };
        return { content: stepIdOf(request) === 'look' ? 'hello' : '5' };
      },
    });
    const roles = writeRoles({
      planner: { model: { url: serverA.url, name: 'scripted-model' } },
      executor: { model: { url: serverB.url, name: 'scripted-model', apiKey: ROLE_KEY } },
      critic: { model: { url: serverB.url, name: 'scripted-model' } },
      reader: { description: 'Reads files.', model: { url: serverB.url, name: 'scripted-model' }, tools: ['read_file'] },
    });
    const dataDir = join(tempDir(), 'data');
    const workspace = tempDir();
    writeFileSync(join(workspace, 'notes.txt'), 'hello');
    const result = await archon(['run', 'add and read', '--model-url', serverA.url, '--roles', roles, '--verify', 'critic', '--data-dir', dataDir, '--workspace', workspace, '--approve', 'auto', '--json']).done;
    expect(result.status, result.stderr).toBe(0);

    const countsA = serverA.countByPurpose();
    const countsB = serverB.countByPurpose();
    expect(countsA).toMatchObject({ plan: 1, final: 1 });
    expect(countsA.step ?? 0).toBe(0);
    expect(countsA.critic ?? 0).toBe(0);
    expect(countsB.plan ?? 0).toBe(0);
    expect(countsB.final ?? 0).toBe(0);
    expect(countsB.step).toBe(serverB.chatRequests.filter((request) => request.purpose === 'step').length);
    expect(countsB.step).toBeGreaterThanOrEqual(3);
    expect(countsB.critic).toBeGreaterThanOrEqual(3);

    // The planner was told the roles; the specialist's requests offer read_file alone, the executor's every tool.
    expect(JSON.stringify(serverA.chatRequests[0]?.body.messages)).toContain('reader: Reads files.');
    const stepRequests = serverB.chatRequests.filter((request) => request.purpose === 'step');
    expect(stepRequests.filter((request) => stepIdOf(request) === 'look').map(toolNames)).toEqual([['read_file'], ['read_file']]);
    expect(toolNames(stepRequests.find((request) => stepIdOf(request) === 'sum') as RecordedRequest)).toEqual(expect.arrayContaining(['calculator', 'read_file', 'run_command']));

    const events = eventsOf(result.stdout);
    expect(events.find((event) => event.type === 'tool.refused' && event.tool === 'calculator')).toMatchObject({ stepId: 'look', by: 'archon', code: 'not_allowed_for_role', reason: expect.stringContaining('The role "reader" may not use calculator') });
    expect(events.filter((event) => (event.type === 'tool.started' || event.type === 'tool.completed') && event.tool === 'calculator')).toEqual([]);
    expect(events.filter((event) => event.type === 'model.probed')).toHaveLength(2);

    const authorizations = (requests: RecordedRequest[]) => new Set(requests.filter((request) => request.path.startsWith('/v1/')).map((request) => request.headers.authorization));
    expect(authorizations(serverB.requests)).toEqual(new Set([`Bearer ${ROLE_KEY}`]));
    expect([...authorizations(serverA.requests)].join()).not.toContain(ROLE_KEY);
    expect(result.stdout).not.toContain(ROLE_KEY);
    expect(databaseBytes(dataDir, 'archon.db').includes(ROLE_KEY)).toBe(false);
    expect(databaseBytes(dataDir, 'audit.db').includes(ROLE_KEY)).toBe(false);
  });

  it('feeds critic as a step role back to the planner as a plan error; a role no one defined runs as executor, noted in the plan\'s validation', async () => {
    const server = await modelServer({
      reply: (request, index) => {
        if (request.purpose === 'plan') return planReply([{ id: 'a', description: 'think', role: index === 0 ? 'critic' : 'ghost' }]);
        return { content: 'done' };
      },
    });
    const result = await archon(['run', 'think', '--model-url', server.url, '--data-dir', tempDir(), '--approve', 'auto', '--json']).done;
    expect(result.status, result.stderr).toBe(0);
    const plans = server.chatRequests.filter((request) => request.purpose === 'plan');
    expect(plans).toHaveLength(2);
    expect(toolMessagesOf(plans[1] as RecordedRequest).join()).toContain('Step "a" names the role "critic", which no step may have');
    expect(server.countByPurpose().step).toBe(1);
    const verdict = eventsOf(result.stdout).find((event) => event.type === 'validation.completed' && event.stepId === null);
    expect(verdict).toMatchObject({ reasons: expect.arrayContaining(['Step "a" names the role "ghost", which is not defined; it runs as executor.']) as string[] });
  });

  it('refuses to start when a role’s server is unreachable, naming the role and its URL (exit 2)', async () => {
    const server = await modelServer({ reply: [] });
    const gone = await modelServer({ reply: [] });
    const goneUrl = gone.url;
    await gone.close();
    const roles = writeRoles({ critic: { model: { url: goneUrl, name: 'judge' } } });
    const dataDir = tempDir();
    const result = await archon(['run', 'x', '--model-url', server.url, '--roles', roles, '--data-dir', dataDir, '--approve', 'auto']).done;
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`role "critic" (${goneUrl})`);
    expect(server.countByPurpose().plan ?? 0).toBe(0);
  });

  it('says what is wrong with a roles file and what it should hold (exit 2)', async () => {
    const roles = writeRoles({ planner: { model: { url: 'not a url', name: 'x' } } });
    const result = await archon(['run', 'x', '--roles', roles, '--data-dir', tempDir()]).done;
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/roles file .*roles\.json is not usable: .*url/);
    expect(result.stderr).toContain('It holds {"roles": {"NAME"');
  });
});
