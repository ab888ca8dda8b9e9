import { createHash } from 'node:crypto';
import { canonicalJson } from '../../shared/canonical-json';
import type { ChatMessage } from '../model/chat';
import type { RunStore } from '../store/run-store';

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

/**
 * One step's conversation with the model, written to archon.db message by message before it is
 * used, so a resumed step goes on from its last recorded turn instead of starting again. Once its
 * oldest turns are compacted, a note stands for them in what is sent (`sent`); `messages` keeps
 * every turn, as the store does.
 */
export class StepConversation {
  private constructor(
    private readonly runs: RunStore,
    private readonly key: { runId: string; stepId: string; attempt: number },
    readonly messages: ChatMessage[],
    private readonly openingLength: number,
    private compaction: { through: number; note: string } | null,
  ) {}

  /** The recorded conversation of this attempt (with its latest compaction), or a new one that starts with `opening`. */
  static open(runs: RunStore, key: { runId: string; stepId: string; attempt: number }, opening: () => ChatMessage[]): StepConversation {
    const recorded = runs.turns(key.runId, key.stepId, key.attempt);
    const first = opening();
    const conversation = new StepConversation(runs, key, recorded, first.length, runs.compaction(key));
    if (recorded.length === 0) conversation.pushAll(first);
    return conversation;
  }

  /** Where the turns not yet compacted begin. */
  get historyStart(): number {
    return this.compaction?.through ?? this.openingLength;
  }

  get note(): string | null {
    return this.compaction?.note ?? null;
  }

  /** Where the original turns a note stands for are kept: their rows in step_turns. */
  pointer(through: number): string {
    return `step_turns:${this.key.runId}/${this.key.stepId}#${this.key.attempt}@${this.openingLength}-${through - 1}`;
  }

  /** The note that stands for the compacted turns, as the model reads it. */
  noteMessage(): ChatMessage | null {
    if (!this.compaction) return null;
    const { through, note } = this.compaction;
    return { role: 'user', content: `Summary of this step's earlier turns (Archon keeps them whole: ${this.pointer(through)}):\n${note}` };
  }

  /** What goes to the model: the opening, the note for the compacted turns, then the turns since. */
  sent(): ChatMessage[] {
    const note = this.noteMessage();
    if (!note) return this.messages;
    return [...this.messages.slice(0, this.openingLength), note, ...this.messages.slice(this.historyStart)];
  }

  /** From now on `note` stands for every turn before `through`; recorded before it is used. */
  compact(through: number, note: string): void {
    this.runs.saveCompaction(this.key, { through, note });
    this.compaction = { through, note };
  }

  push(message: ChatMessage): number {
    const position = this.messages.length;
    this.pushAll([message]);
    return position;
  }

  private pushAll(messages: readonly ChatMessage[]): void {
    this.runs.appendTurns(this.key, this.messages.length, messages);
    this.messages.push(...messages);
  }

  /** Only the opening is recorded: nothing of the step's work has happened yet. */
  get isFresh(): boolean {
    return this.messages.length === this.openingLength;
  }

  /** The model's last reply when nothing was recorded after it: what a crash interrupted acting on. */
  unansweredReply(): { message: AssistantMessage; position: number } | null {
    const position = this.messages.length - 1;
    const last = this.messages[position];
    return last?.role === 'assistant' ? { message: last, position } : null;
  }

  modelTurns(): number {
    return this.messages.filter((message) => message.role === 'assistant').length;
  }

  /**
   * A stable id for a tool call of this step: the same call gets the same id after a crash. It names
   * the call too, so a reply read differently on resume can never be handed another call's result.
   */
  callId(position: number | 'direct', index: number, call: { name: string; args: unknown }): string {
    const digest = createHash('sha256').update(canonicalJson([call.name, call.args ?? null])).digest('hex').slice(0, 12);
    return `${this.key.runId}/${this.key.stepId}#${this.key.attempt}@${position}.${index}:${digest}`;
  }
}
