import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

describe('archon CLI', () => {
  it('lists the six subcommands in --help', () => {
    const result = runArchon(['--help']);
    expect(result.status).toBe(0);
    for (const command of ['run', 'resume', 'runs', 'estop', 'audit', 'serve']) {
      expect(result.stdout).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
    }
  });

  it('exits 2 on a usage error', () => {
    const result = runArchon(['frobnicate']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("unknown command 'frobnicate'");
    expect(runArchon(['serve', '--port', 'eighty']).status).toBe(2);
  });

  it('latches the emergency stop in the data dir and re-arms it, honouring ARCHON_DATA_DIR', () => {
    const dir = tempDir();
    const stop = runArchon(['estop'], { ARCHON_DATA_DIR: dir });
    expect(stop.status).toBe(0);
    expect(stop.stdout).toMatch(/Emergency stop latched/);
    const again = runArchon(['estop', '--reset', '--data-dir', dir]);
    expect(again.stdout).toMatch(/Re-armed\. Nothing was restarted/);
  });

  it('lists no runs in a new data dir', () => {
    const result = runArchon(['runs', '--data-dir', tempDir()]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('No runs yet.');
    expect(runArchon(['runs', '--json', '--data-dir', tempDir()]).stdout).toBe('');
  });

  it('refuses a corrupt archon.db with a message that says what to do, and leaves it unchanged', () => {
    const dir = tempDir();
    const file = join(dir, 'archon.db');
    writeFileSync(file, 'definitely not sqlite');
    const result = runArchon(['runs', '--data-dir', dir]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/not a readable Archon database.*Move it aside/);
    expect(readFileSync(file, 'utf8')).toBe('definitely not sqlite');
  });
});
