import { describe, expect, it } from 'vitest';
import { isSignedBy, signedCall } from '../../../src/core/restate/remote-call';

const SECRET = 'a'.repeat(64);
const call = { tool: 'run_command' as const, args: { command: 'echo hi', timeout_s: 5 }, timeoutMs: 5000 };

describe('a signed tool call', () => {
  it('verifies under its own key and secret, whatever the order of its arguments', () => {
    const signed = signedCall(SECRET, 'run/step#1', call);
    expect(isSignedBy(SECRET, 'run/step#1', signed)).toBe(true);
    expect(isSignedBy(SECRET, 'run/step#1', { ...signed, args: { timeout_s: 5, command: 'echo hi' } })).toBe(true);
  });

  it('does not verify under another key, another secret, or with anything of the call changed', () => {
    const signed = signedCall(SECRET, 'run/step#1', call);
    expect(isSignedBy(SECRET, 'run/step#2', signed)).toBe(false);
    expect(isSignedBy('b'.repeat(64), 'run/step#1', signed)).toBe(false);
    expect(isSignedBy(SECRET, 'run/step#1', { ...signed, args: { command: 'rm -rf ~', timeout_s: 5 } })).toBe(false);
    expect(isSignedBy(SECRET, 'run/step#1', { ...signed, tool: 'write_file' })).toBe(false);
    expect(isSignedBy(SECRET, 'run/step#1', { ...signed, timeoutMs: 600_000 })).toBe(false);
  });
});
