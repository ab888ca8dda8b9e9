import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { approveAll } from '../src/core/approval/approval-channel';
import { requestApproval } from '../src/core/approval/approval-gate';
import { createOpenAIModelClient } from '../src/core/model/model-client';
import { childProcessLauncher } from '../src/core/process/child-process-launcher';
import { EmergencyStop } from '../src/core/stop/emergency-stop';
import { ToolWorkerPool } from '../src/core/tools/tool-worker-pool';
import { startModelServer } from '../test/kit/scripted-model-server';
import { contextFor, seedRun } from './runtime.bench';
import { line, ms, percentile, withRuntime } from './support';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TRIALS = 50;

function sleepers(marker: string): number {
  return execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' }).split('\n').filter((args) => args.startsWith(`sleep ${marker}`)).length;
}

/** Three long commands and three model streams that never answer, then the stop: how long until each is gone. */
async function stopLatency(): Promise<void> {
  const server = await startModelServer({ reply: () => ({ hang: true }) });
  const workspace = mkdtempSync(join(tmpdir(), 'archon-bench-stop-'));
  const streams: number[] = [];
  const processes: number[] = [];
  try {
    await withRuntime(async (runtime) => {
      const model = createOpenAIModelClient({ baseUrl: server.url, model: 'm' });
      for (let trial = 0; trial < TRIALS; trial++) {
        const estop = new EmergencyStop(runtime.store, runtime.bus);
        const pool = new ToolWorkerPool({ launcher: childProcessLauncher, entry: join(ROOT, 'out/node/executor.js'), workspace, networkTools: false, readableRoots: [ROOT] });
        estop.onStop(() => pool.stopAll());
        const marker = `95.${trial}${Math.floor(Math.random() * 1e6)}`;
        const commands = [1, 2, 3].map(() => pool.call('run_command', { command: `sleep ${marker}` }, { signal: estop.signal, timeoutMs: 60_000 }));
        const chats = [1, 2, 3].map(() => model.chat({ purpose: 'step', messages: [{ role: 'user', content: 'hang' }] }, { signal: estop.signal }).catch(() => undefined));
        while (sleepers(marker) < 3 || server.stats.inFlight < 3) await new Promise((resolve) => setTimeout(resolve, 5));
        const started = performance.now();
        const stopped = estop.trigger('operator', 'bench');
        await Promise.all(chats);
        streams.push(performance.now() - started);
        await stopped;
        await Promise.all(commands);
        processes.push(performance.now() - started);
        if (sleepers(marker) !== 0) throw new Error('a process survived the stop');
        estop.reset();
        await pool.close();
        while (server.stats.inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 1));
      }
    });
  } finally {
    await server.close();
    rmSync(workspace, { recursive: true, force: true });
  }
  line(`stop → all model streams aborted (p50, ${TRIALS} trials)`, ms(percentile(streams, 50)));
  line(`stop → all model streams aborted (p99)`, ms(percentile(streams, 99)), '≤ 100 ms');
  line(`stop → zero tool processes (p50)`, ms(percentile(processes, 50)));
  line(`stop → zero tool processes (p99)`, ms(percentile(processes, 99)), '≤ 500 ms');
}

/** Busy loops on every core, so the stop is measured with the machine under load; stopped by the returned function. */
function cpuLoad(): () => void {
  const burners = Array.from({ length: availableParallelism() }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  return () => burners.forEach((burner) => burner.kill('SIGKILL'));
}

/** Processes of a trial still running: sleepers, their shells and sandboxes (a zombie has exited and is not counted). */
function trialProcesses(marker: string): number {
  return execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((row) => row.includes(marker) && !row.trim().startsWith('Z') && !row.includes('ps -eo')).length;
}

/**
 * Sandboxed commands that leave setsid, nohup and double-forked sleepers, stopped under a parallel
 * CPU load: the time from the trigger until the stop resolves, when zero of their processes may run.
 */
async function stopUnderLoad(): Promise<void> {
  const workspace = mkdtempSync(join(tmpdir(), 'archon-bench-stop-load-'));
  const toZero: number[] = [];
  let survivors = 0;
  const unload = cpuLoad();
  try {
    await withRuntime(async (runtime) => {
      for (let trial = 0; trial < TRIALS; trial++) {
        const estop = new EmergencyStop(runtime.store, runtime.bus);
        const pool = new ToolWorkerPool({ launcher: childProcessLauncher, entry: join(ROOT, 'out/node/executor.js'), workspace, networkTools: false, readableRoots: [ROOT] });
        estop.onStop(() => pool.stopAll());
        const marker = `96.${trial}${Math.floor(Math.random() * 1e6)}`;
        const command = `setsid sleep ${marker} & nohup sleep ${marker} >/dev/null 2>&1 & (sleep ${marker} &); sleep ${marker}`;
        const calls = [1, 2, 3].map(() => pool.call('run_command', { command }, { signal: estop.signal, timeoutMs: 60_000 }));
        for (let wait = 0; wait < 6000 && sleepers(marker) < 12; wait++) await new Promise((resolve) => setTimeout(resolve, 5));
        const started = performance.now();
        await estop.trigger('operator', 'bench under load');
        toZero.push(performance.now() - started);
        survivors += trialProcesses(marker);
        await Promise.all(calls);
        estop.reset();
        await pool.close();
      }
    });
  } finally {
    unload();
    rmSync(workspace, { recursive: true, force: true });
  }
  line(`stop under CPU load → processes alive after (${TRIALS} trials)`, String(survivors), '0');
  line(`stop under CPU load → zero processes (p50)`, ms(percentile(toZero, 50)));
  line(`stop under CPU load → zero processes (p99)`, ms(percentile(toZero, 99)));
}

/** From asking to the approval.requested event being out (stored durably first). */
async function approvalLatency(): Promise<void> {
  await withRuntime(async (runtime) => {
    seedRun(runtime, 'approvals', [{ id: 's', description: 'x', dependencies: [] }]);
    const context = { ...contextFor(runtime, 'approvals'), approvals: approveAll };
    const latencies: number[] = [];
    for (let trial = 0; trial < 200; trial++) {
      let heard = 0;
      const unsubscribe = runtime.bus.subscribe((event) => {
        if (event.type === 'approval.requested' && heard === 0) heard = performance.now();
      });
      const started = performance.now();
      await requestApproval(context, { kind: 'tool_call', stepId: 's', summary: 'bench', action: { trial }, explanation: { summary: '', confidence: null, risk: { level: 'low', factors: [] }, reversibility: 'none', cost: { tokensUsed: 0, tokensLeft: null, estimatedUsd: 0 }, downstream: [], alternatives: [] } });
      while (heard === 0) await new Promise((resolve) => setImmediate(resolve));
      latencies.push(heard - started);
      unsubscribe();
    }
    line('approval request → event out (p50)', ms(percentile(latencies, 50)));
    line('approval request → event out (p99)', ms(percentile(latencies, 99)));
  });
}

export async function humanControlBenchmarks(): Promise<void> {
  process.stdout.write('\n## Human control (issue #5)\n');
  await stopLatency();
  await stopUnderLoad();
  await approvalLatency();
}
