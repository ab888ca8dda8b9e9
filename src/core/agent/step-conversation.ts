import type { ChatMessage } from '../model/chat';
import type { RunStore } from '../store/run-store';

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

/**
 * One step's conversation with the model, written to archon.db message by message before it is
 * used, so a resumed step goes on from its last recorded turn instead of starting again.
 */
export class StepConversation {
  private constructor(
    private readonly runs: RunStore,
    private readonly key: { runId: string; stepId: string; attempt: number },
    readonly messages: ChatMessage[],
  ) {}

  /** The recorded conversation of this attempt, or a new one that starts with `opening`. */
  static open(runs: RunStore, key: { runId: string; stepId: string; attempt: number }, opening: () => ChatMessage[]): StepConversation {
    const recorded = runs.turns(key.runId, key.stepId, key.attempt);
    const conversation = new StepConversation(runs, key, recorded);
    if (recorded.length === 0) for (const message of opening()) conversation.push(message);
    return conversation;
  }

  push(message: ChatMessage): number {
    const position = this.messages.length;
    this.runs.appendTurn({ ...this.key, position, message });
    this.messages.push(message);
    return position;
  }

  /** Only the opening is recorded: nothing of the step's work has happened yet. */
  get isFresh(): boolean {
    return !this.messages.some((message) => message.role === 'assistant');
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

  /** A stable id for a tool call of this step: the same call gets the same id after a crash. */
  callId(position: number | 'direct', index = 0): string {
    return `${this.key.runId}/${this.key.stepId}#${this.key.attempt}@${position}.${index}`;
  }
}
