import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuditReportSchema } from '../../../src/shared/schemas/audit';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { planReply, stepIdOf, toolMessagesOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useModelServers } from '../../support/model-servers';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const modelServer = useModelServers();
const archon = (args: string[]) => spawnArchon(args, { OPENAI_API_KEY: '' }).done;

function eventsOf(stdout: string): RunEvent[] {
  return stdout.trim().split('\n').map((line) => RunEventSchema.parse(JSON.parse(line)));
}

/** A step whose model calls a tool that does not exist, a write with arguments of the wrong type and one whose arguments are not JSON; then it answers. */
const STEP_TURNS: ScriptedReply[] = [
  {
    toolCalls: [
      { name: 'no_such_tool', arguments: { target: 'x' } },
      { name: 'write_file', arguments: { path: 42 } },
      { name: 'write_file', arguments: '{"path": "a.txt", "content": ' },
    ],
  },
  { toolCalls: [{ name: 'calculator', arguments: { expression: '2+2' } }] },
  { content: 'Nothing was written; 2+2 is 4.' },
];

describe('calls that never start', () => {
  it('an unknown tool and bad arguments: tool.refused with the reason, no tool.started for them, the model told why, and no high finding in `archon audit report`', async () => {
    let turn = 0;
    const server = await modelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'w', description: 'write a file and add 2 and 2' }]);
        if (request.purpose === 'step' && stepIdOf(request) === 'w') return STEP_TURNS[Math.min(turn++, STEP_TURNS.length - 1)] as ScriptedReply;
        return { content: 'Nothing was written; 2+2 is 4.' };
      },
    });
    const dataDir = tempDir();
    const run = await archon(['run', 'write and add', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--policy', 'balanced', '--approve', 'auto', '--json']);
    expect(run.status, run.stderr).toBe(0);
    const events = eventsOf(run.stdout);

    const refused = events.filter((event): event is Extract<RunEvent, { type: 'tool.refused' }> => event.type === 'tool.refused');
    // The three calls of one reply are admitted side by side: their order is not fixed.
    expect(refused.map(({ tool, by, code }) => `${tool} ${by} ${code}`).sort()).toEqual(['no_such_tool archon unknown_tool', 'write_file archon invalid_arguments', 'write_file archon invalid_arguments']);
    const refusedIds = new Set(refused.map((event) => event.callId));
    expect(events.filter((event) => (event.type === 'tool.started' || event.type === 'tool.completed') && refusedIds.has(event.callId))).toEqual([]);
    expect(events.filter((event) => event.type === 'tool.started').map((event) => event.type === 'tool.started' && event.tool)).toEqual(['calculator']);

    const second = server.chatRequests.filter((request) => request.purpose === 'step')[1] as RecordedRequest;
    const told = toolMessagesOf(second);
    expect(told[0]).toMatch(/Unknown tool "no_such_tool"/);
    expect(told[1]).toMatch(/Invalid arguments for write_file/);
    expect(told[2]).toMatch(/not valid JSON/);

    const runId = (events[0] as RunEvent).runId;
    const audited = await archon(['audit', 'report', runId, '--data-dir', dataDir, '--json']);
    expect(audited.status, audited.stderr).toBe(0);
    const report = AuditReportSchema.parse(JSON.parse(audited.stdout));
    expect(report.runs[0]?.toolCalls).toEqual({ calculator: 1 });
    expect(report.findings.filter((finding) => finding.severity === 'high' || finding.severity === 'critical')).toEqual([]);
    expect(report.findings.filter((finding) => finding.detector === 'boundary')).toEqual([]);
  });

  it('a step whose model asks for a tool outside its role: refused for the role, and the audit report says so as low, with no high finding', async () => {
    const server = await modelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'look', description: 'read notes.txt', role: 'reader' }]);
        if (request.purpose !== 'step') return { content: 'The notes say hello.' };
        const turn = toolMessagesOf(request).length;
        return turn === 0 ? { toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] } : turn === 1 ? { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] } : { content: 'hello' };
      },
    });
    const roles = join(tempDir(), 'roles.json');
    writeFileSync(roles, JSON.stringify({ roles: { reader: { description: 'Reads files.', tools: ['read_file'] } } }));
    const dataDir = tempDir();
    const workspace = tempDir();
    writeFileSync(join(workspace, 'notes.txt'), 'hello');
    const run = await archon(['run', 'read the notes', '--model-url', server.url, '--roles', roles, '--data-dir', dataDir, '--workspace', workspace, '--approve', 'auto', '--json']);
    expect(run.status, run.stderr).toBe(0);
    const events = eventsOf(run.stdout);
    expect(events).toContainEqual(expect.objectContaining({ type: 'step.started', stepId: 'look', role: 'reader', roleTools: ['read_file'] }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'tool.refused', tool: 'calculator', by: 'archon', code: 'not_allowed_for_role' }));

    const audited = await archon(['audit', 'report', (events[0] as RunEvent).runId, '--data-dir', dataDir, '--json']);
    expect(audited.status, audited.stderr).toBe(0);
    const { findings } = AuditReportSchema.parse(JSON.parse(audited.stdout));
    expect(findings.filter((finding) => finding.detector === 'role')).toEqual([expect.objectContaining({ severity: 'low', title: "Step look's model asked for calculator, outside the role reader" })]);
    expect(findings.filter((finding) => finding.severity === 'high' || finding.severity === 'critical')).toEqual([]);
  });
});
