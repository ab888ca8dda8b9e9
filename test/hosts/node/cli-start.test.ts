import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtFile, PROJECT_ROOT } from '../../support/built';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const HOOK = join(PROJECT_ROOT, 'test/fixtures/record-loaded-modules.mjs');

/** Runs the built CLI with every module it loads written down; returns its exit code, output and those modules. */
function traced(args: string[]): { status: number | null; stdout: string; loaded: string[] } {
  const trace = join(tempDir(), 'loaded.txt');
  const result = spawnSync(process.execPath, ['--import', HOOK, builtFile('node/cli.js'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, ARCHON_TEST_MODULE_TRACE: trace },
    timeout: 20_000,
  });
  return { status: result.status, stdout: result.stdout, loaded: existsSync(trace) ? readFileSync(trace, 'utf8').split('\n').filter(Boolean) : [] };
}

const fromPackage = (loaded: string[], name: string) => loaded.filter((url) => url.includes(`/node_modules/${name}/`));

describe('archon starts with only what the command needs', () => {
  it('--help, runs and estop load neither the openai package nor the tool host', () => {
    const dataDir = tempDir();
    for (const args of [['--help'], ['runs', '--data-dir', dataDir], ['estop', '--data-dir', dataDir], ['estop', '--reset', '--data-dir', dataDir]]) {
      const { status, loaded } = traced(args);
      expect(status, args.join(' ')).toBe(0);
      // The trace is real: the CLI's own parser was recorded loading.
      expect(fromPackage(loaded, 'commander').length, args.join(' ')).toBeGreaterThan(0);
      expect(fromPackage(loaded, 'openai'), args.join(' ')).toEqual([]);
      expect(fromPackage(loaded, '@modelcontextprotocol/sdk'), args.join(' ')).toEqual([]);
      expect(loaded.filter((url) => /\/out\/node\/run-command-[^/]*\.js$/.test(url)), args.join(' ')).toEqual([]);
    }
  });

  it('stop, pause, audit and memory commands make no model call and load no model client', () => {
    const dataDir = tempDir();
    const commands = [
      { args: ['stop', 'nosuchrun', '--data-dir', dataDir], status: 2 },
      { args: ['pause', 'nosuchrun', '--data-dir', dataDir], status: 2 },
      { args: ['audit', 'verify', '--data-dir', dataDir], status: 0 },
      { args: ['memory', 'list', '--data-dir', dataDir], status: 0 },
      { args: ['memory', 'search', 'anything', '--data-dir', dataDir], status: 0 },
      { args: ['memory', 'forget', 'nosuchid', '--data-dir', dataDir], status: 2 },
    ];
    for (const command of commands) {
      const { status, loaded } = traced(command.args);
      expect(status, command.args.join(' ')).toBe(command.status);
      expect(fromPackage(loaded, 'openai'), command.args.join(' ')).toEqual([]);
    }
  });

  it('the trace sees the openai package when a command does load it (dream calls a model)', () => {
    const { loaded } = traced(['dream', '--data-dir', tempDir(), '--model-url', 'http://127.0.0.1:9/v1']);
    expect(fromPackage(loaded, 'openai').length).toBeGreaterThan(0);
  });
});
