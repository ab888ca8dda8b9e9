import { createHmac, timingSafeEqual } from 'node:crypto';
import * as restate from '@restatedev/restate-sdk';
import { z } from 'zod';
import { canonicalJson } from '../../shared/canonical-json';

/**
 * What a desk sends a cluster is signed with the cluster's secret, for one handler (`Service/handler`)
 * under one key: anyone who reaches a Restate ingress can invoke a worker, so a worker acts only on
 * what a holder of the secret sent, for that handler and that key, never on a message signed for another.
 */
export type Signed<T> = T & { signature: string };

function digest(secret: string, purpose: string, key: string, body: unknown): Buffer {
  return createHmac('sha256', secret).update(canonicalJson([purpose, key, body])).digest();
}

export function signed<T extends object>(secret: string, purpose: string, key: string, body: T): Signed<T> {
  return { ...body, signature: digest(secret, purpose, key, body).toString('hex') };
}

/** Whether `value` as received (before any parsing fills defaults in) carries the signature of its other fields, for `purpose` under `key`. */
export function isSignedBy(secret: string, purpose: string, key: string, value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { signature, ...body } = value as Record<string, unknown>;
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature)) return false;
  return timingSafeEqual(digest(secret, purpose, key, body), Buffer.from(signature, 'hex'));
}

/** `value` as `schema` reads it, if it is signed for `purpose` under `key`; a terminal refusal otherwise (no retry makes it signed). */
export function verified<T>(secret: string, purpose: string, key: string, value: unknown, schema: z.ZodType<T>, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new restate.TerminalError(`Refused: not ${what} (${parsed.error.issues[0]?.message ?? 'invalid'}).`);
  if (!isSignedBy(secret, purpose, key, value)) throw new restate.TerminalError(`Refused: ${what} not signed with this cluster's secret for ${purpose} under its key.`);
  return parsed.data;
}

/**
 * A signed change carries the time the desk made it, and an object takes a change that lifts
 * something (a re-arm, a schedule set) only when it is newer than the last it took: a message
 * copied from the cluster's journal and sent again is refused.
 */
export const SignedAtSchema = z.object({ at: z.iso.datetime() });

export function isNewer(at: string, last: string | null): boolean {
  return last === null || Date.parse(at) > Date.parse(last);
}

/** The later of two change times. */
export function latest(at: string, last: string | null): string {
  return isNewer(at, last) ? at : (last ?? at);
}
