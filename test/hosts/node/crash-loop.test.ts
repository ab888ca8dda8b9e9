import { describe, expect, it } from 'vitest';
import { startModelServer } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { crashLoop, crashScenarioReply, seededRandom } from '../../support/crash-scenario';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

describe('kill -9 at random moments, then archon resume --approve auto to the end', () => {
  it('repeats no side effect, redoes no completed step, and leaves an intact audit log, over 30 kills', async () => {
    const server = await startModelServer({ reply: crashScenarioReply, latencyMs: 20 });
    try {
      const seed = Number(process.env.ARCHON_CRASH_SEED ?? Date.now() % 1e6);
      const report = await crashLoop({
        modelUrl: server.url,
        newDir: tempDir,
        kills: 30,
        random: seededRandom(seed),
        spawn: (args) => {
          const { child, done } = spawnArchon(args, { OPENAI_API_KEY: '' });
          return { kill: () => child.kill('SIGKILL'), done };
        },
      });
      const context = `seed ${seed}: ${JSON.stringify(report, null, 1)}`;
      expect(report.kills, context).toBeGreaterThanOrEqual(30);
      expect(report.crashes, context).toEqual([]);
      expect(report.repeatedMarks, context).toEqual([]);
      expect(report.redoneSteps, context).toEqual([]);
      expect(report.missingFromAudit, context).toBe(0);
      // Completed, or completed with the gaps a kill left (a call not repeated): never failed, never a silent success.
      expect(report.finalExits.every((code) => code === 0 || code === 7), context).toBe(true);
      expect(report.verifyExits.every((code) => code === 0), context).toBe(true);
    } finally {
      await server.close();
    }
  }, 600_000);
});
