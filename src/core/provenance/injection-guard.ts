import type { PlanStep } from '../../shared/schemas/plan';
import type { PossibleInjection } from '../../shared/schemas/approval';
import { BUILTIN_TOOL_NAMES } from '../../shared/tools/catalogue';
import type { RunContext } from '../run/run-context';
import type { ToolDefinition } from '../tools/tool-registry';
import { readCommandHazards } from '../tools/shell-parser';
import { callReach, holdsToken, namedBy, quietCommand, readReach, runsCode, STEERABLE_HAZARDS, type Reach } from './call-scope';
import { secretsCarried, secretsIn } from './secrets-read';
import { operatorWords, resultSource, stepSources, type UntrustedSource } from './step-provenance';

/*
 * The plan was approved before any untrusted text was read: it is the operator's authority. A step
 * that has since read untrusted text may still act, but a call may have been steered by that text —
 * possibly injected — when it sends somewhere the operator's words do not name, passes on a name taken
 * from the text, writes a file that runs code, runs a command the operator did not ask for that does
 * more than read, build or test; and any call that carries a secret the run read is. Such a call is
 * never answered by a rule or a policy.
 */

type Reasons = PossibleInjection['reasons'];

const MAX_REASON_CHARS = 400;
const shown = (value: string) => (value.length > 120 ? `${value.slice(0, 120)}…` : value);
const reason = (kind: Reasons[number]['kind'], text: string): Reasons[number] => ({ kind, text: text.slice(0, MAX_REASON_CHARS) });

function valuesOf(args: unknown): string[] {
  if (typeof args === 'string' || typeof args === 'number') return [String(args)];
  if (Array.isArray(args)) return args.flatMap(valuesOf);
  if (typeof args === 'object' && args !== null) return Object.values(args).flatMap(valuesOf);
  return [];
}

/** Secrets the run (and its sub-agents) read, each with where it was read and the file it came from. */
function secretsRead(context: RunContext): { secret: string; source: string; path: string | null }[] {
  return context.runs.treeToolCalls(context.runId).flatMap((call) => {
    const source = resultSource(call) ?? `the result of ${call.tool}`;
    const path = call.tool === 'read_file' ? String((call.args as { path?: unknown } | null)?.path ?? '') : null;
    return secretsIn(call.result?.content ?? '').map((secret) => ({ secret, source, path }));
  });
}

/** Secrets a call would carry, in any spelling, across all its arguments; a write back to the file a secret came from carries nothing out. */
function carriedSecrets(context: RunContext, tool: ToolDefinition, args: unknown): Reasons {
  const read = secretsRead(context);
  if (read.length === 0) return [];
  const values = valuesOf(args);
  const writesBack = tool.name === 'write_file' ? String((args as { path?: unknown } | null)?.path ?? '') : null;
  const carried = secretsCarried([...values, values.join('')].join('\n'), read.filter((entry) => entry.path === null || entry.path !== writesBack).map((entry) => entry.secret));
  return carried.map((secret) => reason('secret', `it carries a secret read from ${read.find((entry) => entry.secret === secret)?.source ?? 'a file'}`));
}

/** The first untrusted source that holds the value as a whole token: an id as short as "13" is a name too, when it is the one the text asks for. */
function firstSourceHolding(sources: readonly UntrustedSource[], value: string): UntrustedSource | undefined {
  return sources.find((source) => holdsToken(source.text, value));
}

/** Why one thing the call reaches may come from the untrusted text rather than the operator. */
function reachReason(item: Reach, words: string, sources: readonly UntrustedSource[]): Reasons {
  if (namedBy(words, item.value)) return [];
  if (item.kind === 'write') {
    // A file the step names itself in the workspace can be undone; one that runs code can make a named command do anything.
    return runsCode(item.value) ? [reason('outside_plan', `it writes ${shown(item.value)}, a file that runs code, which neither the goal nor the plan names`)] : [];
  }
  const from = firstSourceHolding(sources, item.value);
  if (from) return [reason('from_untrusted', `its ${item.key || 'argument'} "${shown(item.value)}" comes from ${from.name}, not from the operator`)];
  return item.kind === 'send' ? [reason('outside_plan', `it reaches "${shown(item.value)}", which neither the goal nor the plan names`)] : [];
}

async function commandReasons(tool: ToolDefinition, args: unknown, words: string): Promise<Reasons> {
  if (tool.name !== 'run_command') return [];
  const command = String((args as { command?: unknown } | null)?.command ?? '');
  if (namedBy(words, command)) return [];
  const hazards = (await readCommandHazards(command)).filter((hazard) => STEERABLE_HAZARDS.has(hazard.kind) && !namedBy(words, hazard.text));
  const found = hazards.map((hazard) => reason('outside_plan', `the command does what the operator did not ask (${hazard.kind}: ${shown(hazard.text)})`));
  if (found.length === 0 && !quietCommand(command)) found.push(reason('outside_plan', `the command \`${shown(command)}\` is none the goal or the plan names, and does more than read, build or test`));
  return found;
}

/**
 * Why a call may have been steered by untrusted text, or null when it stays within the operator's
 * authority. Archon's own read-only tools stay inside the workspace and are not checked; any other
 * call is checked for secrets it would carry out and, once the step has read untrusted text, for what
 * it reaches (a read-only one, for the links it is given).
 */
export async function possibleInjection(context: RunContext, step: PlanStep, tool: ToolDefinition, args: unknown): Promise<PossibleInjection | null> {
  const sideEffects = tool.sideEffects !== 'none';
  if (!sideEffects && (BUILTIN_TOOL_NAMES as readonly string[]).includes(tool.name)) return null;
  const reasons = carriedSecrets(context, tool, args);
  const sources = stepSources(context, step);
  if (sources.length > 0) {
    const words = operatorWords(context);
    // A read-only tool of a server elsewhere still reaches the links it is given: one taken from untrusted text may carry data out.
    const reach = sideEffects ? callReach(tool.name, args) : readReach(args);
    reasons.push(...reach.flatMap((item) => reachReason(item, words, sources)), ...(await commandReasons(tool, args, words)));
  }
  if (reasons.length === 0) return null;
  return { sources: [...new Set(sources.map((source) => source.name.slice(0, 300)))].slice(0, 10), reasons: reasons.slice(0, 10) };
}
