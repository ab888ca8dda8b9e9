import { z } from 'zod';
import { BusEnvelopeSchema, type BusEnvelope } from '../../shared/schemas/bus';
import type { SecretRedactor } from '../secrets/redactor';
import { writeTransaction, type SqliteDatabase } from './open-database';

/** An envelope as the store holds it: `seq` orders the whole run's bus, `topicSeq` its topic. */
export interface StoredBusMessage {
  seq: number;
  topicSeq: number;
  envelope: BusEnvelope;
}

const RowSchema = z
  .object({
    seq: z.int(),
    topic_seq: z.int(),
    id: z.string(),
    correlation_id: z.string(),
    from_agent: z.string(),
    to_agent: z.string(),
    topic: z.string(),
    kind: z.string(),
    body: z.string(),
    ts: z.string(),
  })
  .transform((row) => ({
    seq: row.seq,
    topicSeq: row.topic_seq,
    envelope: BusEnvelopeSchema.parse({ id: row.id, correlationId: row.correlation_id, from: row.from_agent, to: row.to_agent, topic: row.topic, kind: row.kind, body: row.body, ts: row.ts }),
  }));

const COLUMNS = 'seq, topic_seq, id, correlation_id, from_agent, to_agent, topic, kind, body, ts';

/** What a subscriber to a topic hears: its own topic, its kind's `type:` topic (when it subscribed to one), and broadcasts. */
const HEARD_ON = "(topic = @topic OR 'type:' || kind = @topic OR topic = 'broadcast')";

/** The bus's messages: each envelope is written here before anyone hears of it. */
export class BusMessageStore {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly secrets: SecretRedactor,
  ) {}

  /** Stores an envelope with the next number on its topic (one transaction: numbers never repeat or skip). */
  append(runId: string, envelope: BusEnvelope): StoredBusMessage {
    const clean = BusEnvelopeSchema.parse(this.secrets.redactValue(envelope));
    return writeTransaction(this.db, () => {
      const last = this.db.prepare('SELECT MAX(topic_seq) AS last FROM bus_messages WHERE run_id = ? AND topic = ?').get(runId, clean.topic) as { last: number | null };
      const topicSeq = (last.last ?? 0) + 1;
      const inserted = this.db
        .prepare('INSERT INTO bus_messages (id, run_id, topic, topic_seq, correlation_id, from_agent, to_agent, kind, body, ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(clean.id, runId, clean.topic, topicSeq, clean.correlationId, clean.from, clean.to, clean.kind, clean.body, clean.ts);
      return { seq: Number(inserted.lastInsertRowid), topicSeq, envelope: clean };
    });
  }

  /** The number of the run's last message (0 before the first): where a new subscriber starts. */
  lastSeq(runId: string): number {
    const row = this.db.prepare('SELECT MAX(seq) AS last FROM bus_messages WHERE run_id = ?').get(runId) as { last: number | null };
    return row.last ?? 0;
  }

  /** The last message of `kind` addressed to `to`: the task a later message about it correlates with. */
  lastTo(runId: string, to: string, kind: string): StoredBusMessage | null {
    const row = this.db.prepare(`SELECT ${COLUMNS} FROM bus_messages WHERE run_id = ? AND to_agent = ? AND kind = ? ORDER BY seq DESC LIMIT 1`).get(runId, to, kind);
    return row === undefined ? null : RowSchema.parse(row);
  }

  /** A body as it would be stored (known secrets blanked out). */
  redact(body: string): string {
    return this.secrets.redactValue(body);
  }

  /** Whether anything answers message `id` (a result or decision correlated with it). */
  answered(runId: string, id: string): boolean {
    return this.db.prepare("SELECT 1 FROM bus_messages WHERE run_id = ? AND correlation_id = ? AND id != ? AND kind IN ('result', 'decision') LIMIT 1").get(runId, id, id) !== undefined;
  }

  /** A run's messages in the order they were published. */
  list(runId: string): StoredBusMessage[] {
    return this.db.prepare(`SELECT ${COLUMNS} FROM bus_messages WHERE run_id = ? ORDER BY seq`).all(runId).map((row) => RowSchema.parse(row));
  }

  /** What a subscriber to `topic` has not heard yet, after `afterSeq`, at most `limit` of them. */
  heardAfter(runId: string, topic: string, afterSeq: number, limit: number): StoredBusMessage[] {
    return this.db
      .prepare(`SELECT ${COLUMNS} FROM bus_messages WHERE run_id = @runId AND seq > @afterSeq AND ${HEARD_ON} ORDER BY seq LIMIT @limit`)
      .all({ runId, topic, afterSeq, limit })
      .map((row) => RowSchema.parse(row));
  }
}
