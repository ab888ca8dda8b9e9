import { afterEach, describe, expect, it } from 'vitest';
import { bubblewrapArguments, type BubblewrapCall } from '../../src/executor/sandbox/bubblewrap';
import { seatbeltArguments, seatbeltProfile } from '../../src/executor/sandbox/seatbelt';
import type { Confinement } from '../../src/shared/executor-protocol';
import { useTempDirs } from '../support/temp-dir';
import { usePools } from '../support/tools';

const tempDir = useTempDirs();
const openPool = usePools();
const confinement = (overrides: Partial<Confinement> = {}): Confinement => ({ mode: 'on', allowNetwork: false, hidden: ['/home/ada', '/home/ada/ws/.data'], ...overrides });

const bwrapCall = (overrides: Partial<BubblewrapCall> = {}): BubblewrapCall => ({
  workspace: '/home/ada/ws',
  confinement: confinement(),
  hiddenInWorkspace: ['/home/ada/ws/.data'],
  environment: { PATH: '/usr/bin:/bin', HOME: '/home/ada/ws' },
  infoFd: 3,
  command: 'echo "$HOME"',
  ...overrides,
});

/** The pairs after each occurrence of a flag that takes two operands. */
const operands = (args: string[], flag: string) => args.flatMap((arg, index) => (arg === flag ? [[args[index + 1], args[index + 2]]] : []));

describe('the bubblewrap sandbox (Linux)', () => {
  it('unshares every namespace, the network too, drops every capability, dies with its parent, starts a new session, and clears the environment', () => {
    const args = bubblewrapArguments(bwrapCall());
    expect(args).toEqual(expect.arrayContaining(['--die-with-parent', '--new-session', '--unshare-all', '--clearenv']));
    expect(operands(args, '--cap-drop')[0]?.[0]).toBe('ALL');
    expect(args).not.toContain('--share-net');
    expect(args.slice(-3)).toEqual(['/bin/sh', '-c', 'echo "$HOME"']);
    expect(operands(args, '--setenv')).toEqual([['PATH', '/usr/bin:/bin'], ['HOME', '/home/ada/ws']]);
    expect(bubblewrapArguments(bwrapCall({ confinement: confinement({ allowNetwork: true }) }))).toContain('--share-net');
  });

  it('binds the system read-only, the workspace read-write, a fresh /proc and a private /tmp; nothing of the home folder, no secret of /etc', () => {
    const args = bubblewrapArguments(bwrapCall());
    const readOnly = operands(args, '--ro-bind-try').map(([source]) => source as string);
    expect(readOnly).toEqual(expect.arrayContaining(['/usr', '/bin', '/lib', '/etc/passwd', '/etc/ssl/certs']));
    expect(readOnly.filter((path) => path === '/etc' || path.startsWith('/home') || /shadow|ssh|private|sudoers/.test(path))).toEqual([]);
    expect(operands(args, '--bind')).toEqual([['/home/ada/ws', '/home/ada/ws']]);
    expect(args.join(' ')).toContain('--proc /proc --dev /dev --tmpfs /tmp');
  });

  it('hides a hidden folder inside the workspace under an empty tmpfs mounted after the workspace', () => {
    const args = bubblewrapArguments(bwrapCall());
    const tmpfs = args.findIndex((arg, index) => arg === '--tmpfs' && args[index + 1] === '/home/ada/ws/.data');
    expect(tmpfs).toBeGreaterThan(args.indexOf('--bind'));
  });
});

describe('the Seatbelt profile (macOS)', () => {
  const call = { workspace: '/Users/ada/my "ws")', tmp: '/private/tmp/cmd-1', confinement: confinement({ hidden: ['/Users/ada', '/Users/ada/Library/Application Support/Archon'] }) };

  it('denies by default, allows the system to be read and the workspace and temp folder to be written, and denies the hidden folders after', () => {
    const { profile, params } = seatbeltProfile(call);
    const lines = profile.split('\n');
    expect(lines.slice(0, 2)).toEqual(['(version 1)', '(deny default)']);
    expect(lines).toContain('(allow file-read* file-write* (subpath (param "WORKSPACE")) (subpath (param "TMP")))');
    expect(lines.at(-1)).toBe('(deny file-read* file-write* (subpath (param "HIDDEN_0")) (subpath (param "HIDDEN_1")))');
    expect(lines.find((line) => line.startsWith('(allow file-read* (subpath'))).toMatch(/SYSTEM_0.*SYSTEM_1/);
    expect(params).toMatchObject({ WORKSPACE: call.workspace, TMP: call.tmp, HIDDEN_0: '/Users/ada', HIDDEN_1: '/Users/ada/Library/Application Support/Archon', SYSTEM_0: '/usr' });
    expect(profile).not.toMatch(/network/);
  });

  it('never splices a path into the profile text, and allows the network only when the operator did', () => {
    expect(seatbeltProfile(call).profile).not.toContain('/Users/ada');
    expect(seatbeltProfile({ ...call, confinement: confinement({ allowNetwork: true }) }).profile).toContain('(allow network*)');
    const args = seatbeltArguments(call, 'ls');
    expect(args.slice(0, 2)).toEqual(['-p', seatbeltProfile(call).profile]);
    expect(args).toEqual(expect.arrayContaining(['-D', `WORKSPACE=${call.workspace}`]));
    expect(args.slice(-3)).toEqual(['/bin/sh', '-c', 'ls']);
  });
});

describe('run_command where no sandbox is available', () => {
  const path = process.env.PATH;
  afterEach(() => {
    process.env.PATH = path;
  });

  it('is refused, saying how to install bubblewrap, unless the sandbox is off; then it runs unconfined', async () => {
    process.env.PATH = '/nonexistent-archon-test-bin';
    const refused = await openPool(tempDir()).call('run_command', { command: 'echo ran' }, { signal: new AbortController().signal, timeoutMs: 10_000 });
    expect(refused).toMatchObject({ status: 'denied', content: expect.stringMatching(/bubblewrap.*apt install bubblewrap.*sandbox to "off"/s), metadata: { refused: 'sandbox_unavailable' } });
    const off = openPool(tempDir(), { confinement: { mode: 'off', allowNetwork: false, hidden: [] } });
    process.env.PATH = path;
    expect(await off.call('run_command', { command: 'echo ran' }, { signal: new AbortController().signal, timeoutMs: 10_000 })).toMatchObject({ status: 'success', content: 'exit code 0\nran', metadata: { sandbox: 'unconfined' } });
  });
});
