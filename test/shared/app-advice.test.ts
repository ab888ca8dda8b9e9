import { describe, expect, it } from 'vitest';
import { probeEndpoint } from '../../src/core/model/endpoint-probe';
import { createOpenAIModelClient } from '../../src/core/model/model-client';
import { inAppTerms } from '../../src/shared/app-advice';

const DEAD = 'http://127.0.0.1:9/v1';

async function messageOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a failure');
}

describe('errors in the app speak of Settings and Resume, not command-line flags', () => {
  it('an unreachable model server at the start: set its address in Settings', async () => {
    const message = await messageOf(probeEndpoint({ baseUrl: DEAD, signal: new AbortController().signal }));
    expect(message).toContain('pass --model-url');
    const shown = inAppTerms(message);
    expect(shown).not.toContain('--');
    expect(shown).toContain(`Cannot reach the model server at ${DEAD}`);
    expect(shown).toContain('set its address in Settings (Model server URL)');
  });

  it('a model server that stopped answering mid-run: start it, then press Resume', async () => {
    const client = createOpenAIModelClient({ baseUrl: DEAD, model: 'm', retry: { windowMs: 100, baseDelayMs: 10, maxDelayMs: 20, firstByteTimeoutMs: 5000, idleTimeoutMs: 5000 } });
    const message = await messageOf(client.chat({ purpose: 'step', messages: [{ role: 'user', content: 'hi' }] }, { signal: new AbortController().signal }));
    expect(inAppTerms(message)).toMatch(new RegExp(`^The model server at ${DEAD.replaceAll('.', '\\.')} did not answer .*then press Resume\\.$`));
  });
});
