import type { PlanStep } from '../../shared/schemas/plan';
import { compactionCut, fitTranscript, historyBudget, transcriptOf, verifiedNote } from '../memory/compaction';
import type { ChatMessage } from '../model/chat';
import { promptTokens } from '../model/context-window';
import { type RunContext } from '../run/run-context';
import { callModel } from '../run/model-gate';
import type { StepConversation } from '../run/step-conversation';
import { rememberFacts } from '../memory/working-memory';

const SUMMARY_PROMPT =
  "You compress the earlier turns of one step of an agent's work into a compact note the agent reads in their place. " +
  'Keep verbatim every name, number, date, URL, file path, command and instruction that may matter later, and what was found, done and decided. ' +
  'Drop chatter and repeated output. Write plain text, no preamble. Do not call tools.';

/** Tokens kept free in the summary request beyond the note's own room: the template's markers and rounding. */
const SUMMARY_MARGIN = 64;

function summaryRequest(step: PlanStep, previous: string | null, transcript: string, room: number): ChatMessage[] {
  const head = `Step ${step.id}: ${step.description}\n\n${previous ? `Summary so far (keep what still matters):\n${previous}\n\n` : ''}Turns to summarise:\n`;
  const system: ChatMessage = { role: 'system', content: SUMMARY_PROMPT };
  const frame = promptTokens([system, { content: head }], undefined);
  return [system, { role: 'user', content: head + fitTranscript(transcript, room - frame) }];
}

/**
 * Before a step's model call: when its history is past its share of the context, the oldest turns
 * are summarised by the model (purpose `summary`, a run's call like any other) into a note that
 * replaces them in what is sent; the note keeps the facts the summary lost, verbatim; the turns stay
 * in the store. Recorded, then announced as `memory.compacted`. The context window's cutting of
 * observations stays the last resort behind this.
 */
export async function compactIfNeeded(context: RunContext, step: PlanStep, conversation: StepConversation): Promise<void> {
  if (!context.contextWindow) return;
  const budget = historyBudget(context.contextWindow);
  const from = conversation.historyStart;
  const noteMessage = conversation.noteMessage();
  const cut = compactionCut(conversation.messages, from, noteMessage ? promptTokens([noteMessage], undefined) : 0, budget);
  if (cut === null) return;
  const tokensBefore = promptTokens(conversation.sent(), undefined);
  const transcript = transcriptOf(conversation.messages.slice(from, cut));
  const previous = conversation.note;
  const room = context.contextWindow.contextLength - budget.note - SUMMARY_MARGIN;
  const response = await callModel(context, { purpose: 'summary', messages: summaryRequest(step, previous, transcript, room), maxTokens: budget.note }, step.id);
  const { note, facts } = verifiedNote(response.content, `${previous ?? ''}\n\n${transcript}`, budget);
  // Facts first: a crash between the two summarises again, and the facts are kept once (deduplicated).
  rememberFacts(context, step.id, facts);
  conversation.compact(cut, note);
  context.events.append(context.runId, 'memory.compacted', { stepId: step.id, turns: cut - from, tokensBefore, tokensAfter: promptTokens(conversation.sent(), undefined), pointer: conversation.pointer(cut) });
}
