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

const RUN_ID = '3f2a9c1e-5b7d-4e21-9a0c-8d6f4b2e1a90';

describe('what the Runs screens say of a run’s end, in the app’s terms', () => {
  it('names a run by the first eight characters of its id, and its pause by the Resume button', () => {
    const shown = inAppTerms(`Its parent run ${RUN_ID} takes this as its step's failure. When the cause is fixed, continue it with \`archon resume ${RUN_ID}\` (or Resume in the app).`);
    expect(shown).toBe("Its parent run 3f2a9c1e takes this as its step's failure. When the cause is fixed, continue it with Resume.");
  });

  it('points to the Re-arm button after an emergency stop, and leaves out accepting gaps from the command line', () => {
    expect(inAppTerms("Emergency stop (operator: test). Re-arm with `archon estop --reset` or the app's Re-arm; nothing restarts by itself.")).toBe('Emergency stop (operator: test). Press Re-arm; nothing restarts by itself.');
    expect(inAppTerms(`The run did not meet its goal: no report. Do what is missing and run the goal again, or accept these gaps: \`archon resume ${RUN_ID} --accept-gaps\` ends it completed with gaps.`)).toBe('The run did not meet its goal: no report. Do what is missing and run the goal again.');
  });

  it('says where a widening change is confirmed without naming command-line flags', () => {
    const refused = "Not changed: the sandbox for commands turned off widens what agents may do, and the operator did not confirm it outside this page (the app asks in a dialog of its own; `archon serve` asks on its terminal, or trusts the page when started with --trust-ui).";
    expect(inAppTerms(refused)).toBe("Not changed: the sandbox for commands turned off widens what agents may do, and the operator did not confirm it outside this page (it is asked outside this page: in the app's own dialog, or on the terminal that started this page's host).");
  });
});
