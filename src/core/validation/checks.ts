import { z } from 'zod';
import type { PlanStep } from '../../shared/schemas/plan';
import type { ValidationCheck } from '../../shared/schemas/validation';
import { balancedEnd, extractFirstJsonObject, parseLenientJson } from '../model/lenient-json';
import { numberAnswer } from '../contract/answer-format';
import { commandClaims, writtenFiles } from '../contract/goal-reading';
import type { RunEvidence } from '../contract/run-evidence';

/*
 * The Agent-Validator's deterministic checks of a step's result. They are lenient on purpose: an
 * honest answer in any wording passes; they catch what is plainly not a result.
 */

/** One tool result the step saw, and whether it was a failure of the tool (not a person's refusal). */
export interface Evidence {
  text: string;
  failed: boolean;
}

const REFUSAL = /^\s*(i'?m sorry|sorry,|i cannot|i can'?t|i am unable|i'?m unable|i won'?t|as an ai\b)/i;
/** A refusal is short: a long answer that opens with an apology usually goes on to answer. */
const REFUSAL_MAX_CHARS = 300;
const ACKNOWLEDGES_FAILURE = /\b(error\w*|fail\w*|could ?n[o']t|can ?n[o']t|unable|not found|no such|denied|did ?n[o']t|does ?n[o']t exist|not exist|impossible|timed? ?out|died|crash\w*|killed|interrupted|broke\w*|lost|problem|issue)\b/i;

function check(name: string, passed: boolean, detail: string): ValidationCheck {
  return passed ? { name, passed } : { name, passed, detail };
}

function resultGiven(result: string): ValidationCheck {
  if (result.trim() === '') return check('result', false, 'The result is empty.');
  const refused = result.length <= REFUSAL_MAX_CHARS && REFUSAL.test(result);
  return check('result', !refused, 'The result is a refusal, not a result of the step.');
}

/** The step must not end on a tool failure it neither recovered from nor reported. */
function toolErrorsResolved(result: string, evidence: readonly Evidence[]): ValidationCheck {
  const last = evidence.at(-1);
  const unresolved = last !== undefined && last.failed && !ACKNOWLEDGES_FAILURE.test(result);
  return check('tool_errors_resolved', !unresolved, `The last tool call failed and the result does not say so: ${last?.text.slice(0, 300) ?? ''}`);
}

/** The first JSON object or array in the text, parsed; fenced or repaired JSON counts. */
function firstJson(text: string): unknown {
  const start = text.search(/[[{]/);
  if (start < 0) return undefined;
  const parsed = parseLenientJson(text.slice(start, balancedEnd(text, start)));
  return parsed.ok && typeof parsed.value === 'object' && parsed.value !== null ? parsed.value : undefined;
}

/** A JSON Schema the expected output spells out (an object with `type` or `properties`), if any. */
function declaredSchema(expected: string): z.ZodType | null {
  const text = extractFirstJsonObject(expected);
  if (!text) return null;
  const parsed = parseLenientJson(text);
  if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null) return null;
  const schema = parsed.value as Record<string, unknown>;
  if (!('type' in schema) && !('properties' in schema)) return null;
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return null;
  }
}

/** "A number" asks for one, checked by parsing; "the number of …" may come with its breakdown, so a digit is enough. */
const ONE_NUMBER = /^\s*(?:(?:just|only) )?(?:a|an|one|single) (?:number|integer)\b(?! of)|\b(?:number|integer) only\b|\b(?:just|only) the (?:number|integer|count|total)\b/i;

function numberFailure(result: string, expected: string): string | null {
  if (!ONE_NUMBER.test(expected)) return /\d/.test(result) ? null : 'The expected output is a number, and the result holds none.';
  const parsed = numberAnswer(result);
  return parsed.holds ? null : `The expected output is a number. ${parsed.detail}`;
}

const FORMATS: readonly { name: string; when: RegExp; failure: (result: string, expected: string) => string | null }[] = [
  { name: 'format_json', when: /\bjson\b/i, failure: (result) => (firstJson(result) !== undefined ? null : 'The expected output is JSON, and the result holds no JSON object or array.') },
  { name: 'format_number', when: /\b(number|integer|count|percentage|amount|total|sum)\b/i, failure: numberFailure },
  { name: 'format_list', when: /\blist\b/i, failure: (result) => (/\n\s*\S/.test(result.trim()) || /[,;]/.test(result) ? null : 'The expected output is a list, and the result is a single item.') },
  { name: 'format_path', when: /\b(file ?path|path of|path to|file ?name)\b/i, failure: (result) => (/[\w.-]*[\\/][\w.\\/-]+|\b[\w-]+\.[a-z0-9]{1,6}\b/i.test(result) ? null : 'The expected output is a file path, and the result names none.') },
];

function expectedOutputMet(expected: string, result: string): ValidationCheck[] {
  const schema = declaredSchema(expected);
  if (schema) {
    const value = firstJson(result);
    const parsed = value === undefined ? null : schema.safeParse(value);
    return [check('schema', parsed?.success === true, value === undefined ? 'The expected output declares a JSON Schema, and the result holds no JSON.' : `The result's JSON does not match the declared schema: ${parsed?.error?.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ') ?? ''}`)];
  }
  return FORMATS.filter((format) => format.when.test(expected)).map((format) => {
    const failure = format.failure(result, expected);
    return check(format.name, failure === null, failure ?? '');
  });
}

/** Each file the result says was written, and each it was to write, has a recorded write and is in the workspace. */
function filesEvidenced(step: PlanStep, result: string, run: RunEvidence): ValidationCheck[] {
  const expected = writtenFiles(step.description).map((path) => ({ path, why: 'the step was to write' }));
  const claimed = writtenFiles(result).map((path) => ({ path, why: 'the result says it wrote' }));
  const seen = new Set<string>();
  const missing: string[] = [];
  for (const { path, why } of [...claimed, ...expected]) {
    if (seen.has(path)) continue;
    seen.add(path);
    const write = run.write(path);
    if (!write.found) missing.push(`${why} ${path}, but ${write.detail}`);
  }
  if (seen.size === 0) return [];
  return [check('files_written', missing.length === 0, `${missing.join(' ')} Write it with write_file, or say plainly that it was not written.`)];
}

/** Each command the result says ran is in the journal, and each it says passed exited 0. */
function commandsEvidenced(result: string, run: RunEvidence): ValidationCheck[] {
  const claims = commandClaims(result);
  if (claims.length === 0) return [];
  const missing = claims.map((claim) => (claim.passed ? run.commandSuccess(claim.command) : run.commandRan(claim.command))).flatMap((found) => (found.found ? [] : [found.detail]));
  return [check('commands_ran', missing.length === 0, `The result says commands ran or passed that the journal does not show: ${missing.join(' ')} Run them with run_command, or report what really happened.`)];
}

/** Every deterministic check that applies to this step's result; with the run's evidence, its claims are checked against what was recorded. */
export function deterministicChecks(step: PlanStep, result: string, evidence: readonly Evidence[], run: RunEvidence | null = null): ValidationCheck[] {
  const checks = [resultGiven(result), toolErrorsResolved(result, evidence)];
  if (step.expected_output) checks.push(...expectedOutputMet(step.expected_output, result));
  if (run) checks.push(...filesEvidenced(step, result, run), ...commandsEvidenced(result, run));
  return checks;
}
