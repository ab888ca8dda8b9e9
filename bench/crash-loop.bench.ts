import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModelServer } from '../test/kit/scripted-model-server';
import { crashLoop, crashScenarioReply, seededRandom } from '../test/support/crash-scenario';
import { line } from './support';

const ARCHON_BIN = fileURLToPath(new URL('../bin/archon.mjs', import.meta.url));

function spawnArchon(args: string[]) {
  const child = spawn(process.execPath, [ARCHON_BIN, ...args], { env: { ...process.env, OPENAI_API_KEY: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const done = new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
  return { kill: () => child.kill('SIGKILL'), done };
}

/** Issue "Exactly once": kill -9 at random moments, resume to the end, and count what went wrong. */
export async function crashLoopBenchmarks(): Promise<void> {
  process.stdout.write('\nCrash loop (kill -9 of archon run/resume at random moments, then resume --approve auto)\n');
  const server = await startModelServer({ reply: crashScenarioReply, latencyMs: 20 });
  const dirs: string[] = [];
  try {
    const report = await crashLoop({
      modelUrl: server.url,
      newDir: () => {
        const dir = mkdtempSync(join(tmpdir(), 'archon-bench-crash-'));
        dirs.push(dir);
        return dir;
      },
      kills: 30,
      random: seededRandom(20261123),
      spawn: spawnArchon,
    });
    line('kills', String(report.kills), '≥ 30');
    line('runs (each resumed to its end)', String(report.scenarios));
    line('side effects repeated', String(report.repeatedMarks.length), '0');
    line('completed steps redone', String(report.redoneSteps.length), '0');
    line('events of archon.db missing from audit.db', String(report.missingFromAudit), '0');
    line('repeats a person was asked about (uncertain_repeat, yes)', String(report.uncertainRepeats));
    line('final resumes not ending in exit 0', String(report.finalExits.filter((code) => code !== 0).length), '0');
    line('audit verify not exit 0', String(report.verifyExits.filter((code) => code !== 0).length), '0');
    line('processes that crashed', String(report.crashes.length), '0');
  } finally {
    await server.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}
