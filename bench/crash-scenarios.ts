import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { planReply, requestText, stepIdOf, type RecordedRequest, type ScriptedReply } from '../test/kit/scripted-model-server';
import { crashScenarioReply } from '../test/support/crash-scenario';

/**
 * The crash loop's scenarios. Every side effect appends one line to ledger.txt in the workspace, and
 * each line is unique (`E-<step>-<turn>`): a line there twice is an effect made twice. The scripted
 * model's next move follows from the conversation it is sent (how many replies it already gave), as
 * a real model's would, so a resumed step gets the answer it would have had.
 */
export interface CrashScenario {
  name: string;
  /** What the scenario's plan does, printed above its figures. */
  summary: string;
  reply(request: RecordedRequest): ScriptedReply;
  /** Extra flags for `archon run` and `archon resume`; `scratch` is a folder of the iteration's own, outside the workspace. */
  flags(scratch: string): string[];
  /** The kill moment is drawn in [minMs, maxMs) after `killFrom`: the process's start, or its first event (the run is stored). */
  killWindowMs: [number, number];
  killFrom: 'spawn' | 'first-event';
  iterations: number;
  /** The ledger of a run that was never killed. */
  expectedEffects: string[];
}

const LEDGER_MCP_SERVER = fileURLToPath(new URL('./fixtures/ledger-mcp-server.mjs', import.meta.url));

function assistantTurns(request: RecordedRequest): number {
  return (request.body.messages ?? []).filter((message) => message.role === 'assistant').length;
}

/** A step's n-th effect, through run_command (echo into the ledger, as a shell would). */
const commandEffect = (step: string, n: number): ScriptedReply => ({ toolCalls: [{ name: 'run_command', arguments: { command: `echo E-${step}-${n} >> ledger.txt` } }] });

/** A step's n-th effect, through the MCP server's append_line (not idempotent). */
const mcpEffect = (step: string, n: number): ScriptedReply => ({ toolCalls: [{ name: 'ledger__append_line', arguments: { id: `E-${step}-${n}` } }] });

/** The original scenario: four steps, each two ledger lines through run_command and a note through write_file. */
const marks: CrashScenario = {
  name: 'marks',
  summary: '4 steps (a diamond), each: run_command → ledger, write_file + run_command → ledger, answer',
  reply: crashScenarioReply,
  flags: () => [],
  killWindowMs: [100, 1400],
  killFrom: 'spawn',
  iterations: 20,
  expectedEffects: ['alpha', 'beta', 'gamma', 'delta'].flatMap((step) => [`MARK-${step}-1`, `MARK-${step}-2`]),
};

const readMissing: ScriptedReply = { toolCalls: [{ name: 'read_file', arguments: { path: 'missing/data.csv' } }] };

/** A step makes its effect, then loops on a file that is not there and fails: recovery re-plans its subtree. */
const replan: CrashScenario = {
  name: 're-plan',
  summary: 'prep → fetch (effect, then a tool failing until loop_detected) → report; re-planned into rebuild → report.r1',
  reply(request) {
    if (request.purpose === 'plan') {
      return planReply([
        { id: 'prep', description: 'Prepare the ledger' },
        { id: 'fetch', description: 'Read the data file', dependencies: ['prep'] },
        { id: 'report', description: 'Summarize the rows', dependencies: ['fetch'] },
      ]);
    }
    if (request.purpose === 'replan') {
      return planReply([
        { id: 'rebuild', description: 'Rebuild the rows from the notes', dependencies: ['prep'] },
        { id: 'report', description: 'Summarize the rebuilt rows', dependencies: ['rebuild'] },
      ]);
    }
    if (request.purpose === 'final') return { content: 'summary of the rebuilt rows' };
    const step = stepIdOf(request) ?? '?';
    const turn = assistantTurns(request);
    if (step === 'fetch') return turn === 0 ? commandEffect(step, 1) : readMissing;
    return turn === 0 ? commandEffect(step, 1) : { content: `${step} done` };
  },
  flags: () => [],
  killWindowMs: [0, 700],
  killFrom: 'first-event',
  iterations: 14,
  expectedEffects: ['E-prep-1', 'E-fetch-1', 'E-rebuild-1', 'E-report.r1-1'],
};

const SUB_GOAL = 'Find the capital of France';
const CHILD_ANSWER = 'The capital of France is Paris (sub-agent).';
const isChild = (request: RecordedRequest) => /^Goal: Find the capital of France$/m.test(requestText(request));

/** A parent whose first step is a sub-agent (two steps of its own, each with an effect), then a report with one. */
const subagent: CrashScenario = {
  name: 'sub-agent',
  summary: 'research (sub-agent: first → second, an effect each) → report (an effect)',
  reply(request) {
    if (request.purpose === 'plan') {
      return isChild(request)
        ? planReply([{ id: 'first', description: 'child work first' }, { id: 'second', description: 'child work second', dependencies: ['first'] }])
        : planReply([{ id: 'research', kind: 'subagent', goal: SUB_GOAL }, { id: 'report', description: 'Write the report', dependencies: ['research'] }]);
    }
    if (request.purpose === 'final') return { content: isChild(request) ? CHILD_ANSWER : 'Report: Paris.' };
    const step = stepIdOf(request) ?? '?';
    return assistantTurns(request) === 0 ? commandEffect(step, 1) : { content: `${step} done` };
  },
  flags: () => [],
  killWindowMs: [0, 700],
  killFrom: 'first-event',
  iterations: 14,
  expectedEffects: ['E-first-1', 'E-second-1', 'E-report-1'],
};

/** Three steps calling a stdio MCP server's non-idempotent append_line (one of them run_command too). */
const mcp: CrashScenario = {
  name: 'MCP tool',
  summary: 'invoice, receipt (MCP append_line each, receipt also run_command) → archive (MCP append_line)',
  reply(request) {
    if (request.purpose === 'plan') {
      return planReply([
        { id: 'invoice', description: 'Record the invoice' },
        { id: 'receipt', description: 'Record the receipt' },
        { id: 'archive', description: 'Archive both', dependencies: ['invoice', 'receipt'] },
      ]);
    }
    if (request.purpose === 'final') return { content: 'recorded and archived' };
    const step = stepIdOf(request) ?? '?';
    const turn = assistantTurns(request);
    if (turn === 0) return mcpEffect(step, 1);
    if (step === 'receipt' && turn === 1) return commandEffect(step, 2);
    return { content: `${step} recorded` };
  },
  flags(scratch) {
    const config = join(scratch, 'mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { ledger: { command: process.execPath, args: [LEDGER_MCP_SERVER] } } }));
    return ['--mcp-config', config];
  },
  killWindowMs: [0, 1000],
  killFrom: 'first-event',
  iterations: 14,
  expectedEffects: ['E-invoice-1', 'E-receipt-1', 'E-receipt-2', 'E-archive-1'],
};

export const CRASH_SCENARIOS: CrashScenario[] = [marks, replan, subagent, mcp];
