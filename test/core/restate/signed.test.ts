import { describe, expect, it } from 'vitest';
import { isNewer, isSignedBy, latest, signed } from '../../../src/core/restate/signed';

const SECRET = 'a'.repeat(64);
const PURPOSE = 'ArchonTools/call';
const call = { tool: 'run_command' as const, args: { command: 'echo hi', timeout_s: 5 }, timeoutMs: 5000 };

describe('what a desk signs for the cluster', () => {
  it('verifies for its own handler, key and secret, whatever the order of its fields, and as JSON sent and read back', () => {
    const sent = signed(SECRET, PURPOSE, 'run/step#1', call);
    expect(isSignedBy(SECRET, PURPOSE, 'run/step#1', sent)).toBe(true);
    expect(isSignedBy(SECRET, PURPOSE, 'run/step#1', { ...sent, args: { timeout_s: 5, command: 'echo hi' } })).toBe(true);
    expect(isSignedBy(SECRET, PURPOSE, 'run/step#1', JSON.parse(JSON.stringify(sent)))).toBe(true);
  });

  it('does not verify for another handler, under another key or secret, with anything changed, added or taken away, or without a signature', () => {
    const sent = signed(SECRET, PURPOSE, 'run/step#1', call);
    expect(isSignedBy(SECRET, 'ArchonSchedules/remove', 'run/step#1', sent)).toBe(false);
    expect(isSignedBy(SECRET, PURPOSE, 'run/step#2', sent)).toBe(false);
    expect(isSignedBy('b'.repeat(64), PURPOSE, 'run/step#1', sent)).toBe(false);
    expect(isSignedBy(SECRET, PURPOSE, 'run/step#1', { ...sent, args: { command: 'rm -rf ~', timeout_s: 5 } })).toBe(false);
    expect(isSignedBy(SECRET, PURPOSE, 'run/step#1', { ...sent, tool: 'write_file' })).toBe(false);
    expect(isSignedBy(SECRET, PURPOSE, 'run/step#1', { ...sent, timeoutMs: 600_000 })).toBe(false);
    expect(isSignedBy(SECRET, PURPOSE, 'run/step#1', { ...sent, approve: 'auto' })).toBe(false);
    const { timeoutMs: _dropped, ...less } = sent;
    expect(isSignedBy(SECRET, PURPOSE, 'run/step#1', less)).toBe(false);
    expect(isSignedBy(SECRET, PURPOSE, 'run/step#1', call)).toBe(false);
    expect(isSignedBy(SECRET, PURPOSE, 'run/step#1', { ...sent, signature: 'zz' })).toBe(false);
    expect(isSignedBy(SECRET, PURPOSE, 'run/step#1', null)).toBe(false);
  });

  it('tells a change newer than the last one taken from one sent again', () => {
    expect(isNewer('2026-11-27T10:00:01.000Z', '2026-11-27T10:00:00.000Z')).toBe(true);
    expect(isNewer('2026-11-27T10:00:00.000Z', '2026-11-27T10:00:00.000Z')).toBe(false);
    expect(isNewer('2026-11-27T09:00:00.000Z', '2026-11-27T10:00:00.000Z')).toBe(false);
    expect(isNewer('2026-11-27T09:00:00.000Z', null)).toBe(true);
    expect(latest('2026-11-27T09:00:00.000Z', '2026-11-27T10:00:00.000Z')).toBe('2026-11-27T10:00:00.000Z');
  });
});
