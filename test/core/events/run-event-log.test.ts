import { describe, expect, it } from 'vitest';
import type { ArchonEvent } from '../../../src/shared/schemas/events';
import { EventBus } from '../../../src/core/events/event-bus';
import { RunEventLog } from '../../../src/core/events/run-event-log';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

function openWithRun(dir: string): ArchonStore {
  const store = ArchonStore.open(dir);
  store.db.prepare("INSERT OR IGNORE INTO runs (id, goal, status, policy, created_at, updated_at) VALUES ('r', 'g', 'running', 'balanced', 'now', 'now')").run();
  return store;
}

describe('RunEventLog', () => {
  it('numbers events per run, batches them, and announces only what is stored', async () => {
    const store = openWithRun(tempDir());
    const bus = new EventBus();
    const log = new RunEventLog(store, bus);
    const heard: { event: ArchonEvent; storedRows: number }[] = [];
    bus.subscribe((event) => heard.push({ event, storedRows: (store.db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n }));

    log.append('r', 'step.started', { stepId: 'a' });
    log.append('r', 'step.started', { stepId: 'b' });
    expect(heard).toHaveLength(0);
    await new Promise((resolve) => setImmediate(resolve));

    expect(heard.map(({ event }) => ('seq' in event ? event.seq : null))).toEqual([1, 2]);
    expect(heard.every(({ storedRows }) => storedRows === 2)).toBe(true);
    store.close();
  });

  it('says whether an event of a type waits to be stored, for a reader that must see it first', () => {
    const store = openWithRun(tempDir());
    const log = new RunEventLog(store, new EventBus());
    log.append('r', 'step.started', { stepId: 'a' });
    expect(log.holds('r', 'step.started')).toBe(true);
    expect(log.holds('r', 'validation.completed')).toBe(false);
    expect(log.holds('other', 'step.started')).toBe(false);
    log.flush();
    expect(log.holds('r', 'step.started')).toBe(false);
    store.close();
  });

  it('continues the sequence after a restart', () => {
    const dir = tempDir();
    const first = openWithRun(dir);
    const log = new RunEventLog(first, new EventBus());
    log.append('r', 'step.started', { stepId: 'a' });
    log.flush();
    first.close();

    const second = openWithRun(dir);
    const log2 = new RunEventLog(second, new EventBus());
    expect(log2.append('r', 'step.completed', { stepId: 'a', result: 'done' }).seq).toBe(2);
    log2.flush();
    second.close();
  });

  it('rejects an event that breaks its schema before it is stored', () => {
    const store = openWithRun(tempDir());
    const log = new RunEventLog(store, new EventBus());
    expect(() => log.append('r', 'step.started', { stepId: 42 as unknown as string })).toThrow();
    expect(log.append('r', 'step.started', { stepId: 'ok' }).seq).toBe(1);
    log.flush();
    expect(store.lastSeq('r')).toBe(1);
    store.close();
  });

  it('blanks out known secrets before an event is stored or announced', () => {
    const store = openWithRun(tempDir());
    store.secrets.add('SECRETKEY123');
    const bus = new EventBus();
    const heard: ArchonEvent[] = [];
    bus.subscribe((event) => heard.push(event));
    const log = new RunEventLog(store, bus);
    log.append('r', 'tool.completed', { stepId: 'a', tool: 'run_command', callId: 'c', status: 'success', content: '--api-key\0SECRETKEY123' });
    log.flush();
    expect(heard).toEqual([expect.objectContaining({ content: '--api-key\0[redacted]' })]);
    expect(JSON.stringify(store.db.prepare('SELECT body_json FROM events').all())).not.toContain('SECRETKEY123');
    store.close();
  });

  it('records tool results with known secrets blanked out, and hands back what was recorded', async () => {
    const store = openWithRun(tempDir());
    store.secrets.add('SECRETKEY123');
    store.db.prepare("INSERT INTO steps (run_id, id, position, spec_json, status) VALUES ('r', 'a', 0, '{}', 'running')").run();
    await store.runs.startToolCall({ id: 'c', runId: 'r', stepId: 'a', tool: 'run_command', args: { command: 'echo SECRETKEY123' }, sideEffects: 'irreversible', idempotent: false, now: 'now' });
    const recorded = store.runs.finishToolCall({ runId: 'r', id: 'c' }, { status: 'success', content: 'OPENAI_API_KEY=SECRETKEY123', metadata: {} }, 'now');
    expect(recorded.content).toBe('OPENAI_API_KEY=[redacted]');
    const row = store.db.prepare("SELECT args_json, result_json FROM tool_calls WHERE id = 'c'").get() as { args_json: string; result_json: string };
    expect(row.args_json).toBe('{"command":"echo [redacted]"}');
    expect(row.result_json).not.toContain('SECRETKEY123');
    store.close();
  });
});
