import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../../shared/canonical-json';

/**
 * What a desk sends a cluster is signed with the cluster's secret under its key: anyone who reaches a
 * Restate ingress can invoke a worker, so a worker acts only on what a desk holding the secret sent.
 */
export type Signed<T> = T & { signature: string };

function digest(secret: string, key: string, body: unknown): Buffer {
  return createHmac('sha256', secret).update(canonicalJson([key, body])).digest();
}

export function signed<T extends object>(secret: string, key: string, body: T): Signed<T> {
  return { ...body, signature: digest(secret, key, body).toString('hex') };
}

/** Whether `value` as received (before any parsing fills defaults in) carries the signature of its other fields under `key`. */
export function isSignedBy(secret: string, key: string, value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { signature, ...body } = value as Record<string, unknown>;
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature)) return false;
  return timingSafeEqual(digest(secret, key, body), Buffer.from(signature, 'hex'));
}
