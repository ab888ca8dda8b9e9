import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunOptions, Verification } from '../src/shared/schemas/run';
import { approveAll } from '../src/core/approval/approval-channel';
import { startRun } from '../src/core/agent/run-engine';
import { modelConnector } from '../src/core/model/connect';
import { runCapabilities } from '../src/core/capabilities';
import { childProcessLauncher } from '../src/core/process/child-process-launcher';
import { builtinTools } from '../src/core/tools/builtin-tools';
import { ToolRegistry } from '../src/core/tools/tool-registry';
import { ToolWorkerPool } from '../src/core/tools/tool-worker-pool';
import { planReply, startModelServer, stepIdOf, type PlanStepScript, type RecordedRequest, type ScriptedReply } from '../test/kit/scripted-model-server';
import { line, withRuntime } from './support';

const STEPS = 6;
const MODES = ['off', 'checks', 'critic'] as const;

interface Cost {
  calls: number;
  tokens: number;
}

/** Each step's first answer is wrong when `repairs`, in a way only the critic catches (it holds a number); right the second time. */
function reply(repairs: boolean): (request: RecordedRequest) => ScriptedReply {
  const answered = new Set<string>();
  const steps = Array.from({ length: STEPS }, (_, index) => ({ id: `s${index}`, description: `report the count of item ${index}`, expected_output: 'a number' }));
  return (request) => {
    if (request.purpose === 'plan') return planReply(steps);
    if (request.purpose === 'final') return { content: 'all counted' };
    const id = stepIdOf(request) ?? '?';
    if (request.purpose === 'critic') {
      const right = /Result to judge:\nThere are \d+/.test(JSON.stringify(request.body.messages).replaceAll('\\n', '\n'));
      return { toolCalls: [{ name: 'submit_verdict', arguments: right ? { verdict: 'pass', gap: 0, reason: 'Counted.', confidence: 0.99 } : { verdict: 'fail', gap: 0.7, reason: 'No count given.', confidence: 0.9 } }] };
    }
    const first = !answered.has(id);
    answered.add(id);
    return { content: repairs && first ? 'About 3 of them, roughly.' : `There are ${id.length * 7} items.` };
  };
}

/** Model calls and tokens per step of one run, by verification mode, beside the run without it. */
async function costPerStep(verification: Verification, repairs: boolean): Promise<Cost> {
  const server = await startModelServer({ reply: reply(repairs) });
  try {
    return await withRuntime(async (runtime) => {
      let calls = 0;
      let tokens = 0;
      runtime.bus.subscribe((event) => {
        if (event.type !== 'model.completed' || event.stepId === null) return;
        calls++;
        tokens += event.promptTokens + event.completionTokens;
      });
      const dependencies = { runs: runtime.store.runs, events: runtime.events, tools: () => new ToolRegistry([]), approvals: approveAll, connect: modelConnector({}), capabilities: runCapabilities };
      const options = { modelUrl: server.url, model: '', policy: 'permissive' as const, concurrency: 3, maxTokens: null, maxCostUsd: null, workspace: process.cwd(), maxIterations: 10, verification, repairBudget: 2, maxReplans: 3 };
      const result = await startRun(dependencies, 'count the items', options, new AbortController().signal);
      if (result.status !== 'completed') throw new Error(`the ${verification} bench run ended ${result.status}: ${result.error}`);
      return { calls: calls / STEPS, tokens: tokens / STEPS };
    });
  } finally {
    await server.close();
  }
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** One goal and the scripted model's part in it: the plan, each step's turns (the last repeats) and the final answer. */
interface Scenario {
  name: string;
  goal: string;
  steps: PlanStepScript[];
  turns: (stepId: string) => ScriptedReply[];
  final: string;
  /** Every step leaves deterministic evidence (a recorded write): `checks` may cost at most one call more than `off` here. */
  evidence?: boolean;
}

const FILES = ['CHANGELOG.md', 'NOTES.md', 'TODO.md'];
const SUMS = [
  ['12 * 7', 84],
  ['9 * 9', 81],
  ['144 / 12', 12],
] as const;
const calculate = (expression: string): ScriptedReply => ({ toolCalls: [{ name: 'calculator', arguments: { expression } }] });

const SCENARIOS: Scenario[] = [
  {
    name: '3 file-writing steps',
    goal: `Write ${FILES[0]}, ${FILES[1]} and ${FILES[2]} for the release.`,
    steps: FILES.map((file, index) => ({ id: `w${index}`, description: `Write ${file} for the release`, expected_output: `${file} written` })),
    turns: (id) => {
      const file = FILES[Number(id.slice(1))] ?? 'OTHER.md';
      return [{ toolCalls: [{ name: 'write_file', arguments: { path: file, content: `# ${file}\n` } }] }, { content: `${file} is written.` }];
    },
    final: `${FILES.join(', ')} are written.`,
    evidence: true,
  },
  {
    name: '3 calculator steps',
    goal: `Work out ${SUMS.map(([sum]) => sum).join(', ')}.`,
    steps: SUMS.map(([sum], index) => ({ id: `c${index}`, description: `Work out ${sum} with the calculator`, expected_output: 'a number' })),
    turns: (id) => {
      const [sum, result] = SUMS[Number(id.slice(1))] ?? ['0', 0];
      return [calculate(sum), { content: String(result) }];
    },
    final: '84, 81 and 12.',
  },
  {
    name: 'number answer',
    goal: 'How many days are there in 6 weeks? Answer with just the number.',
    steps: [{ id: 'days', description: 'Work out 6 * 7 with the calculator', expected_output: 'a number' }],
    turns: () => [calculate('6 * 7'), { content: '42' }],
    final: '42',
  },
];

const pass = (): ScriptedReply => ({ toolCalls: [{ name: 'submit_verdict', arguments: { verdict: 'pass', gap: 0, reason: 'Done as asked.', confidence: 0.99 } }] });

/** The scenario's model, answering every purpose itself (the contract and the outcome check included), so each is a counted call. */
function scriptedModel(scenario: Scenario): (request: RecordedRequest) => ScriptedReply {
  const turn = new Map<string, number>();
  return (request) => {
    switch (request.purpose) {
      case 'plan':
        return planReply(scenario.steps);
      case 'final':
        return { content: scenario.final };
      case 'critic':
      case 'outcome':
        return pass();
      case 'contract':
        return { toolCalls: [{ name: 'submit_contract', arguments: { goal: scenario.goal, success_criteria: [], deliverables: [], constraints: [], out_of_scope: [] } }] };
    }
    const id = stepIdOf(request) ?? '?';
    const turns = scenario.turns(id);
    const index = turn.get(id) ?? 0;
    turn.set(id, index + 1);
    return turns[Math.min(index, turns.length - 1)] as ScriptedReply;
  };
}

interface RunCost extends Cost {
  /** The chat calls by X-Archon-Purpose, in the order first made. */
  byPurpose: Map<string, number>;
}

/** One run of the scenario with real tools in a throwaway workspace: its model calls and tokens as the run's last budget.updated counts them. */
async function costPerRun(scenario: Scenario, verification: Verification): Promise<RunCost> {
  const server = await startModelServer({ reply: scriptedModel(scenario), outcome: 'script', contract: 'script' });
  const workspace = mkdtempSync(join(tmpdir(), 'archon-bench-ws-'));
  const pool = new ToolWorkerPool({ launcher: childProcessLauncher, entry: join(ROOT, 'out', 'node', 'executor.js'), workspace, networkTools: false, readableRoots: [ROOT] });
  try {
    return await withRuntime(async (runtime) => {
      const cost: RunCost = { calls: 0, tokens: 0, byPurpose: new Map() };
      runtime.bus.subscribe((event) => {
        if (event.type === 'budget.updated') Object.assign(cost, { calls: event.modelCalls, tokens: event.tokens });
        if (event.type === 'model.completed' && event.purpose !== 'probe' && event.purpose !== 'embedding') cost.byPurpose.set(event.purpose, (cost.byPurpose.get(event.purpose) ?? 0) + 1);
      });
      const registry = builtinTools(pool);
      const dependencies = { runs: runtime.store.runs, events: runtime.events, tools: () => registry, approvals: approveAll, connect: modelConnector({}), capabilities: runCapabilities };
      const options: RunOptions = { modelUrl: server.url, model: '', policy: 'permissive', concurrency: 3, maxTokens: null, maxCostUsd: null, workspace, maxIterations: 10, verification, repairBudget: 2, maxReplans: 3 };
      const result = await startRun(dependencies, scenario.goal, options, new AbortController().signal);
      if (result.status !== 'completed') throw new Error(`The bench run "${scenario.name}" under --verify ${verification} ended ${result.status}: ${result.error}`);
      return cost;
    });
  } finally {
    await pool.close();
    await server.close();
    rmSync(workspace, { recursive: true, force: true });
  }
}

function row(cells: readonly string[]): void {
  const widths = [22, 7, 12, 8, 12];
  process.stdout.write(`${cells.map((cell, index) => cell.padEnd(widths[index] ?? 0)).join(' ')}\n`);
}

/** Model calls and tokens per run under each mode; throws when `checks` costs more than one call over `off` where every step has deterministic evidence. */
async function costPerRunByMode(): Promise<void> {
  process.stdout.write('\n## Cost of "done means done": model calls and tokens per run, by --verify mode\n');
  row(['scenario', 'verify', 'model calls', 'tokens', 'extra vs off', 'calls by purpose']);
  let extraOnEvidence = NaN;
  for (const scenario of SCENARIOS) {
    const costs = new Map<Verification, RunCost>();
    for (const mode of MODES) costs.set(mode, await costPerRun(scenario, mode));
    const offCalls = costs.get('off')?.calls ?? NaN;
    for (const [mode, cost] of costs) row([scenario.name, mode, String(cost.calls), String(cost.tokens), `+${cost.calls - offCalls}`, [...cost.byPurpose].map(([purpose, count]) => `${purpose} ${count}`).join(', ')]);
    if (scenario.evidence) extraOnEvidence = (costs.get('checks')?.calls ?? NaN) - offCalls;
  }
  line('checks vs off, every step with evidence: extra calls / run', String(extraOnEvidence), '≤ 1');
  if (!(extraOnEvidence <= 1)) throw new Error(`--verify checks cost ${extraOnEvidence} extra model calls per run over --verify off where every step carries deterministic evidence; it may cost at most one (the outcome check).`);
}

export async function validationBenchmarks(): Promise<void> {
  process.stdout.write('\n## Cost of verification (issue #14): model calls and tokens per step\n');
  for (const repairs of [false, true]) {
    for (const verification of MODES) {
      const cost = await costPerStep(verification, repairs);
      const label = `${verification}, ${repairs ? 'first answer wrong' : 'answers right'}`;
      line(`${label}: model calls / step`, cost.calls.toFixed(2));
      line(`${label}: tokens / step`, String(Math.round(cost.tokens)));
    }
  }
  await costPerRunByMode();
}
