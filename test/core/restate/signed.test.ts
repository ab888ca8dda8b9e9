import { describe, expect, it } from 'vitest';
import { isSignedBy, signed } from '../../../src/core/restate/signed';

const SECRET = 'a'.repeat(64);
const call = { tool: 'run_command' as const, args: { command: 'echo hi', timeout_s: 5 }, timeoutMs: 5000 };

describe('what a desk signs for the cluster', () => {
  it('verifies under its own key and secret, whatever the order of its fields, and as JSON sent and read back', () => {
    const sent = signed(SECRET, 'run/step#1', call);
    expect(isSignedBy(SECRET, 'run/step#1', sent)).toBe(true);
    expect(isSignedBy(SECRET, 'run/step#1', { ...sent, args: { timeout_s: 5, command: 'echo hi' } })).toBe(true);
    expect(isSignedBy(SECRET, 'run/step#1', JSON.parse(JSON.stringify(sent)))).toBe(true);
  });

  it('does not verify under another key, another secret, with anything changed, added or taken away, or without a signature', () => {
    const sent = signed(SECRET, 'run/step#1', call);
    expect(isSignedBy(SECRET, 'run/step#2', sent)).toBe(false);
    expect(isSignedBy('b'.repeat(64), 'run/step#1', sent)).toBe(false);
    expect(isSignedBy(SECRET, 'run/step#1', { ...sent, args: { command: 'rm -rf ~', timeout_s: 5 } })).toBe(false);
    expect(isSignedBy(SECRET, 'run/step#1', { ...sent, tool: 'write_file' })).toBe(false);
    expect(isSignedBy(SECRET, 'run/step#1', { ...sent, timeoutMs: 600_000 })).toBe(false);
    expect(isSignedBy(SECRET, 'run/step#1', { ...sent, approve: 'auto' })).toBe(false);
    const { timeoutMs: _dropped, ...less } = sent;
    expect(isSignedBy(SECRET, 'run/step#1', less)).toBe(false);
    expect(isSignedBy(SECRET, 'run/step#1', call)).toBe(false);
    expect(isSignedBy(SECRET, 'run/step#1', { ...sent, signature: 'zz' })).toBe(false);
    expect(isSignedBy(SECRET, 'run/step#1', null)).toBe(false);
  });
});
