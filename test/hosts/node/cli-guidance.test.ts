import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createAuditKey, findAuditSecrets } from '../../../src/auditor/audit-key';
import { AuditLog } from '../../../src/auditor/audit-log';
import type { AuditReport } from '../../../src/shared/schemas/audit';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** An HTTP server that is not a model server: every path answers with the same body. */
async function otherServer(contentType: string, body: string): Promise<string> {
  server = createServer((_request, response) => response.writeHead(200, { 'content-type': contentType }).end(body));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

const run = (modelUrl: string, ...extra: string[]) => spawnArchon(['run', 'hello', '--model-url', modelUrl, '--data-dir', tempDir(), '--workspace', tempDir(), '--approve', 'auto', ...extra], { OPENAI_API_KEY: '' }).done;

describe('archon run: the model server address', () => {
  it('a server that answers with an HTML page is named as not a model server: exit 2', async () => {
    const result = await run(await otherServer('text/html', '<!doctype html><html><head><title>Router login</title></head><body>hi</body></html>'));
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/is not an OpenAI-compatible model server: GET \/models answered an HTML page \("Router login"\)\. Check the address/);
  });

  it('a server that answers JSON without a model list is named as not a model server: exit 2', async () => {
    const url = await otherServer('application/json', '{"status":"ok"}');
    const listing = await run(url);
    expect(listing.status).toBe(2);
    expect(listing.stderr).toContain('GET /models answered JSON without `data`');
  });

  it('a near-miss preset is suggested: exit 2', async () => {
    const result = await run('olama');
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('"olama" is neither an http(s) URL nor a preset: did you mean ollama? (presets: builtin, ollama, lm-studio, llama-cpp, vllm, openai)');
  });

  it('an address where nothing listens: exit 2 with what to do', async () => {
    const result = await run('http://127.0.0.1:9/v1');
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('Cannot reach the model server at http://127.0.0.1:9/v1');
  });
});

describe('archon audit report RUN_ID', () => {
  function auditedRuns(runIds: string[]): string {
    const dataDir = tempDir();
    const log = AuditLog.open(dataDir, createAuditKey(findAuditSecrets(dataDir)));
    const ts = new Date(Date.UTC(2026, 10, 21, 9)).toISOString();
    log.append(runIds.map((runId) => ({ runId, eventSeq: 1, type: 'run.started', ts, body: { type: 'run.started', runId, seq: 1, ts, goal: `goal of ${runId}`, policy: 'balanced', toolApproval: {} } })));
    log.close();
    return dataDir;
  }

  it('accepts the 8-character id the app shows', async () => {
    const dataDir = auditedRuns(['3f2a9c1e-0000-4000-8000-000000000001', '7b4d0e22-0000-4000-8000-000000000002']);
    const result = await spawnArchon(['audit', 'report', '3f2a9c1e', '--data-dir', dataDir, '--json']).done;
    expect(result.status, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as AuditReport).runs.map((entry) => entry.runId)).toEqual(['3f2a9c1e-0000-4000-8000-000000000001']);
  });

  it('a prefix of several runs: exit 2 listing them; an unknown id: exit 2', async () => {
    const dataDir = auditedRuns(['3f2a9c1e-0000-4000-8000-000000000001', '3f2a0000-0000-4000-8000-000000000002']);
    const ambiguous = await spawnArchon(['audit', 'report', '3f2a', '--data-dir', dataDir]).done;
    expect(ambiguous.status).toBe(2);
    expect(ambiguous.stderr).toContain('"3f2a" matches 2 audited runs: 3f2a0000-0000-4000-8000-000000000002, 3f2a9c1e-0000-4000-8000-000000000001');
    const unknown = await spawnArchon(['audit', 'report', 'deadbeef', '--data-dir', dataDir]).done;
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('No audited run has an id starting with "deadbeef"');
    expect(unknown.stdout).toBe('');
  });
});
