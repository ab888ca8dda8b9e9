import type { PlanStep } from '../../shared/schemas/plan';
import type { RunEvent } from '../../shared/schemas/events';
import { BUILTIN_TOOL_NAMES, TRUSTED_RESULT_TOOLS } from '../../shared/tools/catalogue';
import type { RunContext } from '../run/run-context';
import type { RunToolCall } from '../store/run-store';
import { earlierRunName, fenced, fenceNonce, RECALLED_MEMORY } from './spotlight';

/*
 * Where the text in a step's context came from. The operator's words (goal, first plan, contract, their
 * edits and feedback) are trusted, and so are Archon's own results; anything read from outside — a file
 * (even one the run wrote: a step that read a page may have written it), a web page, a command's output,
 * an MCP tool's result, a recalled memory, an earlier step's result built on such reads — is untrusted:
 * it may inform a step, never steer it.
 */

/** A piece of untrusted text a step has seen, and what to call it when a call follows it. */
export interface UntrustedSource {
  name: string;
  text: string;
}

/** Tools whose failures carry outside text too (a page served as a 404, a failing test's output, a server's error). */
const FAILURES_FROM_OUTSIDE = new Set(['http_get', 'run_command']);
const MAX_NAME_CHARS = 120;

function argument(call: Pick<RunToolCall, 'args'>, name: string): string {
  const value = (call.args as Record<string, unknown> | null)?.[name];
  return typeof value === 'string' ? value : '';
}

const isBuiltin = (tool: string) => (BUILTIN_TOOL_NAMES as readonly string[]).includes(tool);
const clipped = (text: string) => (text.length > MAX_NAME_CHARS ? `${text.slice(0, MAX_NAME_CHARS)}…` : text);

/** Whether a result carries text from outside: a success of any reading tool, and the failures of tools whose failures hold outside text. */
function fromOutside(call: Pick<RunToolCall, 'tool' | 'result'>): boolean {
  // "Outcome unknown" is Archon's own word on an interrupted call.
  if (TRUSTED_RESULT_TOOLS.has(call.tool) || !call.result || call.result.metadata.outcome === 'unknown') return false;
  if (call.result.status === 'success') return true;
  return call.result.status === 'error' && (FAILURES_FROM_OUTSIDE.has(call.tool) || !isBuiltin(call.tool));
}

/** A command's result without its status line: nothing but "exit code 0" says nothing. */
const commandOutput = (content: string) => content.replace(/^exit code \S+\n?/, '').trim();

/** What an untrusted result is called ("README.md", "the page https://…"), or null for one the run can trust. */
export function resultSource(call: Pick<RunToolCall, 'tool' | 'args' | 'result'>): string | null {
  if (!fromOutside(call)) return null;
  if (call.tool === 'run_command' && commandOutput(call.result?.content ?? '') === '') return null;
  switch (call.tool) {
    case 'read_file':
      return clipped(argument(call, 'path') || 'a file');
    case 'http_get':
      return `the page ${clipped(argument(call, 'url'))}`;
    case 'run_command':
      return `the output of \`${clipped(argument(call, 'command'))}\``;
    case 'list_files':
      return `the listing of ${clipped(argument(call, 'path') || 'the workspace')}`;
    case 'search_files':
      return 'file search results';
    default:
      return isBuiltin(call.tool) ? call.tool : `the result of ${clipped(call.tool)}`;
  }
}

/** Each untrusted result among `calls`, named. */
function untrustedResults(calls: readonly Pick<RunToolCall, 'tool' | 'args' | 'result'>[]): UntrustedSource[] {
  return calls.flatMap((call) => {
    const name = resultSource(call);
    return name === null ? [] : [{ name, text: call.result?.content ?? '' }];
  });
}

/** What memory recalled for a step, or (no step) for planning. */
function recalledFor(context: RunContext, stepId: string | undefined): UntrustedSource[] {
  const recalled = context.runs.events(context.runId, Number.MAX_SAFE_INTEGER).filter((event) => event.type === 'memory.recalled' && event.stepId === stepId);
  if (recalled.length === 0) return [];
  const ids = new Set(recalled.flatMap((event) => (event.type === 'memory.recalled' ? event.items.map((item) => item.id) : [])));
  return [{ name: RECALLED_MEMORY, text: (context.memory?.textsOf([...ids]) ?? []).join('\n') }];
}

/** The earlier run a follow-up's briefs carry, with its brief; null for a run that follows none. */
export function earlierRunOf(context: Pick<RunContext, 'options' | 'earlierRun'>): { runId: string; brief: string } | null {
  const runId = context.options.followUpOf;
  return runId && context.earlierRun ? { runId, brief: context.earlierRun } : null;
}

/** A follow-up's earlier run, which every step's brief carries: its answer and results may rest on untrusted reads. */
function earlierRunFor(context: RunContext): UntrustedSource[] {
  const earlier = earlierRunOf(context);
  return earlier ? [{ name: earlierRunName(earlier.runId), text: earlier.brief }] : [];
}

/**
 * The untrusted text a step has seen: its own tool results and, for a sub-agent step, its child run's;
 * the memories recalled for it; a follow-up's earlier run; and the results of the steps it depends on
 * that saw untrusted text.
 * Each step is worked out once however many paths reach it.
 */
export function stepSources(context: RunContext, step: PlanStep): UntrustedSource[] {
  const calls = context.runs.treeToolCalls(context.runId);
  const results = new Map(context.runs.getSteps(context.runId).map((stored) => [stored.spec.id, stored.result ?? '']));
  const known = new Map<string, UntrustedSource[]>();
  const sourcesOf = (current: PlanStep): UntrustedSource[] => {
    const done = known.get(current.id);
    if (done) return done;
    known.set(current.id, []);
    const child = context.runs.childRun(context.runId, current.id)?.id;
    const own = untrustedResults([...calls.filter((call) => call.runId === context.runId && call.stepId === current.id), ...(child ? context.runs.treeToolCalls(child) : [])]);
    const inherited = current.dependencies.flatMap((id) => {
      const dependency = context.plan?.steps.find((candidate) => candidate.id === id);
      const seen = dependency ? sourcesOf(dependency) : [];
      return seen.length === 0 ? [] : [{ name: `the result of step ${id} (built on ${seen[0]?.name ?? 'untrusted text'})`, text: results.get(id) ?? '' }];
    });
    const found = [...own, ...recalledFor(context, current.id), ...earlierRunFor(context), ...inherited];
    known.set(current.id, found);
    return found;
  };
  return sourcesOf(step);
}

/** A step's result as another model call sees it (a dependant's brief, a re-plan): fenced as data when the step saw untrusted text. */
export function resultAsSeen(context: RunContext, stepId: string, result: string): string {
  const step = context.plan?.steps.find((candidate) => candidate.id === stepId);
  const seen = step ? stepSources(context, step) : [];
  return seen.length === 0 ? result : fenced(fenceNonce(context), `step ${stepId}, which read ${seen[0]?.name ?? 'untrusted text'}`, result);
}

const wordsOf = (text: string) => text.toLowerCase().split(/[\s"\\]+/).filter((word) => word !== '');

/** The plan's words that the untrusted text it was planned with does not hold: what the plan adds of its own. */
function beyond(plan: string, background: string): string {
  const held = new Set(wordsOf(background));
  return wordsOf(plan)
    .filter((word) => !held.has(word))
    .join(' ');
}

/** Whether a person (not a rule) approved a plan of the run. */
function personApprovedPlan(events: readonly RunEvent[]): boolean {
  const planRequests = new Set(events.flatMap((event) => (event.type === 'approval.requested' && event.kind === 'plan' ? [event.approvalId] : [])));
  return events.some((event) => event.type === 'approval.resolved' && event.decidedBy === 'operator' && event.decision.verdict === 'approve' && planRequests.has(event.approvalId));
}

/**
 * The operator's own words for the run: the goal, the plan as it was first made (before any step read
 * untrusted text), the contract, and what a person decided — edits and feedback. A re-plan a rule
 * approved after the steps read untrusted text is not among them. A first plan made with recalled
 * memory or an earlier run in view counts only for what that text does not hold, unless a person
 * approved it: otherwise a planted memory could plan its own call and then pass for the operator's.
 */
export function operatorWords(context: RunContext): string {
  const events = context.runs.events(context.runId, Number.MAX_SAFE_INTEGER);
  const firstPlan = events.find((event) => event.type === 'plan.ready');
  const said = events.flatMap((event) => {
    if (event.type === 'contract.ready') return [JSON.stringify(event.contract)];
    if (event.type !== 'approval.resolved' || event.decidedBy !== 'operator') return [];
    const decision = event.decision;
    if (decision.verdict === 'reject') return [decision.feedback];
    return decision.verdict === 'edit' ? [JSON.stringify(decision.edited)] : [];
  });
  const plan = JSON.stringify(firstPlan?.type === 'plan.ready' ? firstPlan.plan.steps : (context.plan?.steps ?? []));
  const background = [...recalledFor(context, undefined), ...earlierRunFor(context)].map((source) => source.text).join('\n');
  const planWords = background === '' || personApprovedPlan(events) ? plan : beyond(plan, background);
  return [context.goal, planWords, ...said].join('\n').toLowerCase();
}
