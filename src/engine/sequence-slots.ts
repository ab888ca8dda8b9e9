import type { LlamaChat } from 'node-llama-cpp';
import { RequestError } from './request-error';

/** More requests than this waiting for a sequence is a client flooding the engine: the next is refused (503). */
const MAX_WAITING = 256;

type Waiter = (chat: LlamaChat) => void;

/** One generation per sequence: a request takes a free one or waits its turn; a waiter whose client left leaves the queue. */
export class SequenceSlots {
  private readonly free: LlamaChat[];
  private readonly waiting: Waiter[] = [];

  constructor(chats: readonly LlamaChat[]) {
    this.free = [...chats];
  }

  async acquire(signal: AbortSignal): Promise<LlamaChat> {
    signal.throwIfAborted();
    const chat = this.free.pop();
    if (chat) return chat;
    if (this.waiting.length >= MAX_WAITING) throw new RequestError(503, 'overloaded_error', `${MAX_WAITING} requests are already waiting for the engine; try again later`);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = (taken) => {
        signal.removeEventListener('abort', leave);
        resolve(taken);
      };
      const leave = () => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', leave, { once: true });
      this.waiting.push(waiter);
    });
  }

  release(chat: LlamaChat): void {
    const next = this.waiting.shift();
    if (next) next(chat);
    else this.free.push(chat);
  }
}
