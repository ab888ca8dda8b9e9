import { z } from 'zod';
import { describeZodError } from '../../shared/errors';
import { SubmitLessonsSchema, type MemoryItem, type SubmitLessons } from '../../shared/schemas/memory';
import type { ChatMessage, ChatResponse, ModelClient, ModelMode, ToolSpec } from '../model/chat';
import { readToolCalls } from '../model/dialects/read-tool-calls';
import { splitReasoning } from '../model/dialects/reasoning';
import { extractFirstJsonObject, parseLenientJson } from '../model/lenient-json';
import type { DreamLog } from '../store/dream-log';
import type { RunStore } from '../store/run-store';
import { DREAMABLE_STATUSES, dreamRecord } from './dream-record';
import type { NewMemoryItem } from './memory-store';

export const SUBMIT_LESSONS = 'submit_lessons';

type Lesson = SubmitLessons['lessons'][number];

/** Runs read in one dream: enough to compare runs, few enough for a small model's context. */
export const RUNS_PER_DREAM = 8;
/** The Dreamer's answer is read at most this many times; an unreadable one is fed back once with why. */
const MAX_LESSON_REQUESTS = 2;

const submitLessonsSpec: ToolSpec = {
  name: SUBMIT_LESSONS,
  description: 'Submit the lessons learned from the runs: each with its text, the ids of the runs whose records support it, and what kind of goal or step it applies to.',
  parameters: z.toJSONSchema(SubmitLessonsSchema, { io: 'input' }) as Record<string, unknown>,
};

function dreamerPrompt(mode: ModelMode): string {
  return [
    "You are Archon's Dreamer. You read the records of finished runs and write lessons that will help plan and carry out similar goals next time:",
    'what worked, what failed and why, and which decompositions the Goal Gradient Solver penalised (re-plans that did not bring the goal closer).',
    'State a cause only when the records give it, in their words; never guess a cause they do not state. A lesson is one or two sentences an agent can act on.',
    'evidence: the ids of the runs (from the records below, and only those) whose records support the lesson. applies_to: the kind of goal or step it applies to.',
    'Nothing worth learning: an empty list.',
    mode === 'native'
      ? `Call ${SUBMIT_LESSONS} exactly once with {"lessons": [{"text", "evidence", "applies_to"}]}.`
      : 'Reply with one line and nothing else: Lessons: {"lessons": [{"text": "…", "evidence": ["<run id>"], "applies_to": "…"}]}',
  ].join('\n');
}

/** The lessons' JSON text: a submit_lessons call (native, or in any dialect), else the object after `Lessons:`, else the first object. */
function lessonsText(response: ChatResponse): string | null {
  const native = response.toolCalls.find((call) => call.name === SUBMIT_LESSONS);
  if (native) return native.arguments;
  const written = readToolCalls(response.content, [submitLessonsSpec], { reasoning: response.reasoning });
  if (written?.calls[0]) return written.calls[0].arguments;
  const content = splitReasoning(response.content).content;
  const marker = /lessons\s*:/i.exec(content);
  return extractFirstJsonObject(content, marker?.index ?? 0);
}

function readLessons(response: ChatResponse): { ok: true; lessons: Lesson[] } | { ok: false; error: string } {
  const text = lessonsText(response);
  if (text === null) return { ok: false, error: `No lessons were found. Answer with ${SUBMIT_LESSONS} (or a line "Lessons: {…}").` };
  const json = parseLenientJson(text);
  if (!json.ok) return { ok: false, error: `The lessons are not valid JSON (${json.error}).` };
  const parsed = SubmitLessonsSchema.safeParse(json.value);
  return parsed.success ? { ok: true, lessons: parsed.data.lessons } : { ok: false, error: `The lessons do not match their schema: ${describeZodError(parsed.error)}.` };
}

function feedback(response: ChatResponse, error: string): ChatMessage[] {
  const message = `${error} Submit the lessons again.`;
  const call = response.toolCalls[0];
  if (call) return [{ role: 'assistant', content: response.content || null, toolCalls: [call] }, { role: 'tool', toolCallId: call.id, content: message }];
  return [{ role: 'assistant', content: response.content }, { role: 'user', content: message }];
}

export interface DreamerDependencies {
  runs: RunStore;
  dreams: DreamLog;
  memory: { add(input: NewMemoryItem): MemoryItem };
  /** The model to ask, connected only when there is something to dream. */
  connect(signal: AbortSignal): Promise<{ model: ModelClient; mode: ModelMode }>;
  signal: AbortSignal;
  now?: () => Date;
}

export interface DreamOutcome {
  /** The runs read (and now marked dreamt). */
  runIds: string[];
  stored: MemoryItem[];
  /** Lessons left out because their evidence named a run that was not among those read (MM-12). */
  dropped: Lesson[];
  /** Why the model's answer could not be read, when it could not; the runs stay undreamt then. */
  unreadable: string | null;
}

/** A lesson stands only on runs the Dreamer was shown: evidence naming any other run (or one that does not exist) drops it (MM-12). */
export function supportedLessons(lessons: readonly Lesson[], shown: ReadonlySet<string>): { kept: (Lesson & { firstRun: string })[]; dropped: Lesson[] } {
  const kept: (Lesson & { firstRun: string })[] = [];
  const dropped: Lesson[] = [];
  for (const lesson of lessons) {
    const [firstRun] = lesson.evidence;
    if (firstRun !== undefined && lesson.evidence.every((runId) => shown.has(runId))) kept.push({ ...lesson, firstRun });
    else dropped.push(lesson);
  }
  return { kept, dropped };
}

async function askForLessons(deps: DreamerDependencies, records: readonly string[]): Promise<{ ok: true; lessons: Lesson[] } | { ok: false; error: string }> {
  const { model, mode } = await deps.connect(deps.signal);
  const messages: ChatMessage[] = [
    { role: 'system', content: dreamerPrompt(mode) },
    { role: 'user', content: `Records of ${records.length} finished run(s):\n\n${records.join('\n\n')}` },
  ];
  let read: { ok: true; lessons: Lesson[] } | { ok: false; error: string } = { ok: false, error: 'not asked' };
  for (let attempt = 1; attempt <= MAX_LESSON_REQUESTS; attempt++) {
    const response = await model.chat({ purpose: 'lessons', messages, tools: mode === 'native' ? [submitLessonsSpec] : undefined }, { signal: deps.signal });
    read = readLessons(response);
    if (read.ok) return read;
    messages.push(...feedback(response, read.error));
  }
  return read;
}

/**
 * The Dreamer (MM-10…12): reads finished runs not dreamt yet, asks the model for lessons
 * (`submit_lessons`, purpose `lessons`), keeps those whose evidence names only runs it read, and
 * stores them as `lesson` memories; the runs are marked dreamt in the same transaction.
 */
export async function dream(deps: DreamerDependencies): Promise<DreamOutcome> {
  const candidates = deps.dreams.undreamt(DREAMABLE_STATUSES, RUNS_PER_DREAM);
  const records = candidates.flatMap((runId) => {
    const record = dreamRecord(deps.runs, runId);
    return record === null ? [] : [{ runId, record }];
  });
  if (records.length === 0) return { runIds: [], stored: [], dropped: [], unreadable: null };
  const answer = await askForLessons(deps, records.map((entry) => entry.record));
  const runIds = records.map((entry) => entry.runId);
  if (!answer.ok) return { runIds: [], stored: [], dropped: [], unreadable: answer.error };
  const { kept, dropped } = supportedLessons(answer.lessons, new Set(runIds));
  const stored: MemoryItem[] = [];
  const now = (deps.now ?? (() => new Date()))().toISOString();
  deps.dreams.record(runIds, kept.length, now, () => {
    for (const lesson of kept) {
      stored.push(deps.memory.add({ kind: 'lesson', text: lesson.text, source: { runId: lesson.firstRun, stepId: null }, evidence: lesson.evidence, appliesTo: lesson.applies_to }));
    }
  });
  return { runIds, stored, dropped, unreadable: null };
}
