import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { planReply, startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const events = (stdout: string): RunEvent[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => RunEventSchema.parse(JSON.parse(line)));

const budgetOf = (stdout: string) => events(stdout).findLast((event): event is Extract<RunEvent, { type: 'budget.updated' }> => event.type === 'budget.updated');

/** The scripted server through an address Archon does not count as this machine: its model is not free, and nobody priced it. */
const remoteUrl = (url: string) => url.replace('127.0.0.1', '[::ffff:127.0.0.1]');

const PASS = { toolCalls: [{ name: 'submit_verdict', arguments: { verdict: 'pass', gap: 0, reason: 'done', confidence: 1 } }] };

describe('archon run: a cost cap needs a price', () => {
  it('--max-cost against an unpriced model refuses to start (exit 2, saying where to set a price); --price or a price in Settings lets it run, charged at that price', async () => {
    server = await startModelServer({
      reply: (request) => ({ ...(request.purpose === 'plan' ? planReply([{ id: 'a', description: 'answer' }]) : request.purpose === 'outcome' ? PASS : { content: 'done' }), usage: { prompt_tokens: 1000, completion_tokens: 500 } }),
      // Every call, the outcome check's too, is answered with the same usage.
      outcome: 'script',
      models: ['mystery-model'],
    });
    const dataDir = tempDir();
    const args = ['run', 'priced', '--model-url', remoteUrl(server.url), '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--max-cost', '1', '--json'];
    const refused = await spawnArchon(args).done;
    expect(refused.status, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/price of model "mystery-model" is unknown.*Settings.*--price/s);
    expect(server.chatRequests).toHaveLength(0);
    const db = new Database(join(dataDir, 'archon.db'));
    expect(db.prepare('SELECT count(*) AS n FROM runs').get()).toEqual({ n: 0 });

    const flagged = await spawnArchon([...args, '--price', '2,10']).done;
    expect(flagged.status, flagged.stderr).toBe(0);
    // Each call: 1,000 input tokens at $2 and 500 output tokens at $10 per million = $0.007.
    expect(budgetOf(flagged.stdout)).toMatchObject({ priceKnown: true, maxCostUsd: 1 });
    expect(budgetOf(flagged.stdout)?.costUsd).toBeCloseTo(0.007 * (budgetOf(flagged.stdout)?.modelCalls ?? 0), 10);

    // The price is kept with the run: its summary knows it, and a resume charges the same.
    expect(JSON.parse((db.prepare('SELECT options_json FROM runs').get() as { options_json: string }).options_json)).toMatchObject({ price: { inputPerMillion: 2, outputPerMillion: 10 } });
    db.prepare('INSERT INTO settings (key, value_json) VALUES (?, ?)').run('modelPrices', JSON.stringify({ 'mystery-model': { inputPerMillion: 1, outputPerMillion: 1 } }));
    db.close();
    const fromSettings = await spawnArchon(args).done;
    expect(fromSettings.status, fromSettings.stderr).toBe(0);
    expect(budgetOf(fromSettings.stdout)?.costUsd).toBeCloseTo(0.0015 * (budgetOf(fromSettings.stdout)?.modelCalls ?? 0), 10);
  });

  it('without a cost cap an unpriced model runs, its budget saying the price is unknown', async () => {
    server = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'answer' }]) : { content: 'done' }), models: ['mystery-model'] });
    const result = await spawnArchon(['run', 'unpriced', '--model-url', remoteUrl(server.url), '--data-dir', tempDir(), '--workspace', tempDir(), '--approve', 'auto', '--json']).done;
    expect(result.status, result.stderr).toBe(0);
    expect(budgetOf(result.stdout)).toMatchObject({ priceKnown: false });
  });
});
