import { afterEach, describe, expect, it } from 'vitest';
import { ArchonError } from '../../../src/shared/errors';
import { createOpenAIModelClient } from '../../../src/core/model/model-client';
import { DEFAULT_RETRY_POLICY, type RetryClock, type RetryPolicy } from '../../../src/core/model/retry-policy';
import { startModelServer, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Time that moves only when the code waits on it (or a test says an attempt took a while); the waits are recorded. */
function testClock(): { clock: RetryClock; waits: number[]; pass(ms: number): void } {
  let now = 0;
  const waits: number[] = [];
  return {
    waits,
    pass: (ms) => (now += ms),
    clock: {
      now: () => now,
      sleep: async (ms, signal) => {
        signal.throwIfAborted();
        waits.push(ms);
        now += ms;
      },
      random: () => 1,
    },
  };
}

const request = { purpose: 'step' as const, messages: [{ role: 'user' as const, content: 'hello' }] };

async function failureOf(reply: () => ScriptedReply, policy: RetryPolicy, clock: RetryClock): Promise<{ failure: ArchonError; attempts: number }> {
  server = await startModelServer({ reply });
  const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: policy, clock });
  const failure = await client.chat(request, { signal: new AbortController().signal }).catch((error: unknown) => error);
  if (!ArchonError.isInstance(failure)) throw new Error(`expected an ArchonError, got ${String(failure)}`);
  return { failure, attempts: server.chatRequests.length };
}

describe('the retry window', () => {
  it('spends the whole window: the last wait is cut to what is left, and the pause says so', async () => {
    const time = testClock();
    const { failure, attempts } = await failureOf(() => ({ status: 500, message: 'model crashed' }), DEFAULT_RETRY_POLICY, time.clock);
    const backoffs = [500, 1000, 2000, 4000, ...Array<number>(14).fill(8000)];
    expect(time.waits).toEqual([...backoffs, 500]);
    expect(time.waits.reduce((sum, wait) => sum + wait, 0)).toBe(DEFAULT_RETRY_POLICY.windowMs);
    expect(attempts).toBe(20);
    expect(failure.code).toBe('MODEL_UNAVAILABLE');
    expect(failure.message).toMatch(/did not answer for 120 s \(20 attempts; last: HTTP 500 .*model crashed\)\. The run is paused: .*resume the run\./s);
  });

  it('counts slow attempts against the window and names the time really waited, not the window', async () => {
    const time = testClock();
    const slowFailure = (): ScriptedReply => {
      time.pass(3000);
      return { status: 503, message: 'overloaded' };
    };
    const { failure, attempts } = await failureOf(slowFailure, { ...DEFAULT_RETRY_POLICY, windowMs: 20_000, baseDelayMs: 1000 }, time.clock);
    // Failures at 3, 7, 12, 19 and 26 s; the window opened at the first: 4 s were left before the fifth attempt.
    expect(time.waits).toEqual([1000, 2000, 4000, 4000]);
    expect(attempts).toBe(5);
    expect(failure.message).toMatch(/did not answer for 26 s \(5 attempts; last: HTTP 503 /);
  });

  it("never waits beyond the window, even when the server's Retry-After asks for longer", async () => {
    const time = testClock();
    const { failure, attempts } = await failureOf(() => ({ status: 429, retryAfterSeconds: 30 }), { ...DEFAULT_RETRY_POLICY, windowMs: 10_000 }, time.clock);
    expect(time.waits).toEqual([10_000]);
    expect(attempts).toBe(2);
    expect(failure.message).toMatch(/did not answer for 10 s \(2 attempts; last: HTTP 429 /);
  });

  it('a window of zero gives up at the first failure, without waiting', async () => {
    const time = testClock();
    const { failure, attempts } = await failureOf(() => ({ status: 500 }), { ...DEFAULT_RETRY_POLICY, windowMs: 0 }, time.clock);
    expect(time.waits).toEqual([]);
    expect(attempts).toBe(1);
    expect(failure.message).toMatch(/did not answer for 0\.0 s \(1 attempt; last: HTTP 500 /);
  });
});
