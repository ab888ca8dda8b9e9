import { createHash, randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, type ArchonRuntime } from '../../../src/core/runtime';
import { EmergencyStop } from '../../../src/core/stop/emergency-stop';
import { ArchonError } from '../../../src/shared/errors';
import { RunOptionsSchema } from '../../../src/shared/schemas/run';
import { useRuntimes, useServices } from '../../support/runtime';
import { useTempDirs } from '../../support/temp-dir';

const openRuntime = useRuntimes();
const openServices = useServices();
const tempDir = useTempDirs();
const extra: ArchonRuntime[] = [];
afterEach(() => {
  for (const runtime of extra.splice(0)) runtime.close();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A finished run that changed a.txt from "before" to "after". */
function runThatWrote(runtime: ArchonRuntime): { runId: string; file: string } {
  const workspace = tempDir();
  const file = `${workspace}/a.txt`;
  writeFileSync(file, 'after');
  const runId = randomUUID();
  const options = RunOptionsSchema.parse({ modelUrl: 'http://127.0.0.1:9/v1', model: 'm', policy: 'balanced', concurrency: 1, maxTokens: null, maxCostUsd: null, workspace, maxIterations: 10 });
  runtime.store.runs.createRun({ id: runId, goal: 'g', policy: 'balanced', options, now: new Date().toISOString() });
  runtime.store.runs.fileEffects.record(runId, 'call-1', { path: 'a.txt', existed: true, previousSha256: sha256('before'), previousBase64: Buffer.from('before').toString('base64'), newSha256: sha256('after') });
  return { runId, file };
}

const stopOf = (runtime: ArchonRuntime) => new EmergencyStop(runtime.store, runtime.bus, runtime.now);
const aborted = (signal: AbortSignal) => new Promise((resolve) => (signal.aborted ? resolve(signal.reason) : signal.addEventListener('abort', () => resolve(signal.reason), { once: true })));

describe('EmergencyStop.taskSignal', () => {
  it('hands out signals the stop aborts, refuses while latched, and hands out fresh ones once re-armed', async () => {
    const stop = stopOf(openRuntime());
    const caller = new AbortController();
    const cancelled = stop.taskSignal(caller.signal);
    const running = stop.taskSignal();
    caller.abort(new ArchonError('CANCELLED', 'the client went away'));
    expect(cancelled.reason).toMatchObject({ code: 'CANCELLED' });
    expect(running.aborted).toBe(false);

    await stop.trigger('operator', 'pulled the plug');
    expect(running.reason).toMatchObject({ code: 'ESTOP_LATCHED', message: expect.stringContaining('pulled the plug') });
    expect(() => stop.taskSignal()).toThrow(expect.objectContaining({ code: 'ESTOP_LATCHED', message: expect.stringContaining('Re-arm') }));

    stop.reset();
    expect(stop.taskSignal().aborted).toBe(false);
  });

  it('follows a stop and a re-arm written by another process sharing the data dir', async () => {
    const here = openRuntime();
    const there = createRuntime({ dataDir: here.dataDir });
    extra.push(there);
    const stop = stopOf(here);
    const other = stopOf(there);

    await other.trigger('operator', 'from the terminal');
    expect(() => stop.taskSignal()).toThrow(expect.objectContaining({ code: 'ESTOP_LATCHED', message: expect.stringContaining('from the terminal') }));
    const unwatch = stop.watch(10);
    await aborted(stop.signal);
    unwatch();

    other.reset();
    expect(stop.taskSignal().aborted).toBe(false);
  });
});

describe("the app's long commands under the stop", () => {
  it('refuses an undo, an MCP Test and an endpoint probe while latched, saying how to re-arm', async () => {
    const { services } = openServices();
    await services.estop.trigger('operator', 'test');
    const context = { signal: new AbortController().signal };
    const refused = { code: 'ESTOP_LATCHED', message: expect.stringContaining('Re-arm') };
    await expect(services.handlers['runs.undo']({ runId: randomUUID() }, context)).rejects.toMatchObject(refused);
    await expect(services.handlers['endpoint.probe']({ modelUrl: 'http://127.0.0.1:9/v1' }, context)).rejects.toMatchObject(refused);
    await expect(services.handlers['mcp.probe']({ name: 'shell', config: { command: '/bin/true' } }, context)).rejects.toMatchObject(refused);
  });

  it('ends an undo under way, leaving its writes to undo, and undoes them once re-armed', async () => {
    const { runtime, services } = openServices();
    const { runId, file } = runThatWrote(runtime);
    const context = { signal: new AbortController().signal };
    const undoing = services.handlers['runs.undo']({ runId }, context);
    await services.estop.trigger('operator', 'not now');
    await expect(undoing).rejects.toMatchObject({ code: 'ESTOP_LATCHED', message: expect.stringContaining('not now') });
    expect(readFileSync(file, 'utf8')).toBe('after');
    expect(runtime.store.runs.fileEffects.pending(runId)).toHaveLength(1);

    services.estop.reset();
    expect(await services.handlers['runs.undo']({ runId }, context)).toEqual({ reverted: ['a.txt'], refused: [] });
    expect(readFileSync(file, 'utf8')).toBe('before');
  });
});
