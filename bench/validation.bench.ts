import type { Verification } from '../src/shared/schemas/run';
import { approveAll } from '../src/core/approval/approval-channel';
import { startRun } from '../src/core/agent/run-engine';
import { modelConnector } from '../src/core/model/connect';
import { runCapabilities } from '../src/core/capabilities';
import { ToolRegistry } from '../src/core/tools/tool-registry';
import { planReply, startModelServer, stepIdOf, type RecordedRequest, type ScriptedReply } from '../test/kit/scripted-model-server';
import { line, withRuntime } from './support';

const STEPS = 6;

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

export async function validationBenchmarks(): Promise<void> {
  process.stdout.write('\n## Cost of verification (issue #14): model calls and tokens per step\n');
  for (const repairs of [false, true]) {
    for (const verification of ['off', 'checks', 'critic'] as const) {
      const cost = await costPerStep(verification, repairs);
      const label = `${verification}, ${repairs ? 'first answer wrong' : 'answers right'}`;
      line(`${label}: model calls / step`, cost.calls.toFixed(2));
      line(`${label}: tokens / step`, String(Math.round(cost.tokens)));
    }
  }
}
