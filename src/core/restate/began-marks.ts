import { randomUUID } from 'node:crypto';
import * as restate from '@restatedev/restate-sdk';
import { z } from 'zod';
import type { RestateCluster } from './restate-cluster';
import { signed, verified } from './signed';

const MarkSchema = z.object({ by: z.string().min(1).max(200) });

/**
 * Marks that something with side effects began (a tool call, a run), one per key, each naming the
 * worker that began it: set once, read by any later attempt on any worker. Asked through the ingress
 * (outside the attempt's journal, so a later attempt sees it), so signed: a mark set by anyone else
 * would make what never began look as if it may have.
 */
export function beganMarks(name: string, secret: string) {
  return restate.object({
    name,
    handlers: {
      begin: async (ctx: restate.ObjectContext, input: unknown): Promise<string | null> => {
        const { by } = verified(secret, `${name}/begin`, ctx.key, input, MarkSchema, 'a mark');
        // A mark an earlier Archon set said only that it began.
        const earlier = (await ctx.get<string>('by')) ?? ((await ctx.get<boolean>('begun')) === true ? 'an earlier worker' : null);
        if (earlier === null) ctx.set('by', by);
        return earlier;
      },
      /** Undone by whoever set it, when what it marked never began after all. */
      release: async (ctx: restate.ObjectContext, input: unknown): Promise<void> => {
        const { by } = verified(secret, `${name}/release`, ctx.key, input, MarkSchema, 'a release');
        if ((await ctx.get<string>('by')) === by) ctx.clear('by');
      },
    },
  });
}

/** Marks `key` of the marks object `name` as begun by worker `by`: the worker that began it before, or null when this is the first. */
export function markBegun(cluster: RestateCluster, secret: string, name: string, key: string, by: string, signal: AbortSignal): Promise<string | null> {
  // A key of this attempt's own: a mark request repeated within the attempt is not taken for an earlier attempt's.
  return cluster.call(`${name}/${encodeURIComponent(key)}/begin`, signed(secret, `${name}/begin`, key, { by }), `${key}/${randomUUID()}`, z.string().nullable(), signal);
}

/** Clears the mark `by` set, when what it marked never began (nothing else is cleared). */
export async function releaseBegun(cluster: RestateCluster, secret: string, name: string, key: string, by: string, signal: AbortSignal): Promise<void> {
  await cluster.call(`${name}/${encodeURIComponent(key)}/release`, signed(secret, `${name}/release`, key, { by }), `${key}/${randomUUID()}`, z.null(), signal);
}
