import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { approveAll } from '../src/core/approval/approval-channel';
import { startRun } from '../src/core/agent/run-engine';
import { modelConnector } from '../src/core/model/connect';
import { runCapabilities } from '../src/core/capabilities';
import { createRuntime } from '../src/core/runtime';
import { ToolRegistry } from '../src/core/tools/tool-registry';
import type { RunOptions } from '../src/shared/schemas/run';
import { planReply, startModelServer } from '../test/kit/scripted-model-server';
import { line } from './support';

const ARCHON = fileURLToPath(new URL('../out/node/cli.js', import.meta.url));
const SIZES = [100, 1000];
const SERVE_RUNS = 100;

type Shape = 'chain' | 'fan-out';

function steps(shape: Shape, count: number) {
  return Array.from({ length: count }, (_, index) => ({ id: `s${index}`, description: `step ${index}`, dependencies: shape === 'chain' && index > 0 ? [`s${index - 1}`] : [] }));
}

/** One run of a plan whose steps answer at once: archon.db bytes and CPU (this process: engine and scripted server) per step. */
async function planCost(shape: Shape, count: number): Promise<{ bytes: number; cpuMs: number; status: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'archon-bench-scale-'));
  const server = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply(steps(shape, count)) : { content: 'done' }) });
  const runtime = createRuntime({ dataDir });
  try {
    const dependencies = { runs: runtime.store.runs, events: runtime.events, tools: () => new ToolRegistry([]), approvals: approveAll, connect: modelConnector({}), capabilities: runCapabilities };
    const options: RunOptions = { modelUrl: server.url, model: '', policy: 'balanced', concurrency: 8, maxTokens: null, maxCostUsd: null, workspace: dataDir, maxIterations: 10, verification: 'off', repairBudget: 2, maxReplans: 3, maxPlanSteps: count };
    const cpu = process.cpuUsage();
    const result = await startRun(dependencies, `${shape} of ${count}`, options, new AbortController().signal);
    const used = process.cpuUsage(cpu);
    runtime.close();
    return { bytes: statSync(join(dataDir, 'archon.db')).size / count, cpuMs: (used.user + used.system) / 1000 / count, status: result.status };
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function rssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
}

/** `archon serve` driven over its socket: one small run after another, the host's RSS read after 10 and after SERVE_RUNS. */
async function serveRss(): Promise<{ after10: number; afterAll: number; completed: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'archon-bench-serve-'));
  const server = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'say hello' }]) : { content: 'hello' }) });
  const child = spawn(process.execPath, [ARCHON, 'serve', '--port', '0', '--data-dir', dataDir, '--model-url', server.url, '--policy', 'permissive'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const first = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
    const url = new URL(first.replace(/^Archon UI: /, ''));
    const ws = new WebSocket(`ws://127.0.0.1:${url.port}/ws?token=${url.searchParams.get('token') ?? ''}`, { origin: url.origin });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const waiting = new Map<number, (result: { ok: boolean; value?: unknown }) => void>();
    let nextId = 1;
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data)) as { id?: number; result?: { ok: boolean; value?: unknown } };
      if (frame.id !== undefined && frame.result) waiting.get(frame.id)?.(frame.result);
    });
    const call = (command: string, input: unknown) => new Promise<{ ok: boolean; value?: unknown }>((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      ws.send(JSON.stringify({ id, command, input }));
    });
    let after10 = NaN;
    let completed = 0;
    for (let run = 1; run <= SERVE_RUNS; run++) {
      const started = (await call('runs.start', { goal: `greet ${run}` })).value as { runId: string };
      for (let poll = 0; poll < 600; poll++) {
        // The operator's part: every request (the final answer, under permissive) approved as it comes.
        for (const request of ((await call('approvals.list', {})).value ?? []) as { id: string; actionHash: string }[]) {
          await call('approvals.decide', { approvalId: request.id, actionHash: request.actionHash, decision: { verdict: 'approve' } });
        }
        const detail = (await call('runs.get', { runId: started.runId })).value as { run: { status: string }; active: boolean };
        if (!detail.active && detail.run.status !== 'running') {
          if (detail.run.status === 'completed') completed++;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      if (run === 10) after10 = await rssKb(child.pid as number);
    }
    const afterAll = await rssKb(child.pid as number);
    ws.close();
    return { after10, afterAll, completed };
  } finally {
    child.kill('SIGTERM');
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const load = () => loadavg().map((value) => value.toFixed(2)).join(' ');

/** Issue #19: a large plan's cost per step stays flat (chains and fan-outs of 100 and 1,000 steps), and `archon serve` holds steady over many runs. */
export async function scaleBenchmarks(): Promise<void> {
  process.stdout.write(`\nLarge plans and bounded memory (load average ${load()})\n`);
  for (const shape of ['chain', 'fan-out'] as const) {
    const costs = [];
    for (const count of SIZES) {
      const cost = await planCost(shape, count);
      costs.push(cost);
      line(`${shape} of ${count}: archon.db bytes / step (${cost.status})`, cost.bytes.toFixed(0));
      line(`${shape} of ${count}: CPU ms / step`, cost.cpuMs.toFixed(2));
    }
    const [small, large] = costs as [(typeof costs)[number], (typeof costs)[number]];
    line(`${shape}: bytes / step at 1,000 ÷ at 100`, `${(large.bytes / small.bytes).toFixed(2)}×`, shape === 'chain' ? '≤ 1.2×' : undefined);
    line(`${shape}: CPU / step at 1,000 ÷ at 100`, `${(large.cpuMs / small.cpuMs).toFixed(2)}×`);
  }
  const serve = await serveRss();
  line(`archon serve RSS after 10 runs`, `${(serve.after10 / 1024).toFixed(1)} MB`);
  line(`archon serve RSS after ${SERVE_RUNS} runs (${serve.completed} completed)`, `${(serve.afterAll / 1024).toFixed(1)} MB`);
  line(`archon serve RSS after ${SERVE_RUNS} ÷ after 10`, `${(serve.afterAll / serve.after10).toFixed(2)}×`, '≤ 1.3×');
  process.stdout.write(`(load average at the end ${load()})\n`);
}
