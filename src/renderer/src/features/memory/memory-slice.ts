import { ArchonError } from '../../../../shared/errors';
import type { MemoryItem, MemoryKind } from '../../../../shared/schemas/memory';
import type { SliceContext } from '../../store/slice';

export interface MemoryFilter {
  query: string;
  kind: MemoryKind | null;
}

export interface MemorySlice {
  memories: MemoryItem[];
  memoryFilter: MemoryFilter;
  /** Lists (no query) or searches long-term memory, and keeps the filter for the next refresh. */
  loadMemories(filter: MemoryFilter): Promise<void>;
  /** New text, a pin, or the scope (global: recalled by runs of every workspace). */
  updateMemory(id: string, change: { text?: string; pinned?: boolean; global?: boolean }): Promise<void>;
  forgetMemory(id: string): Promise<void>;
}

const MEMORY_LIMIT = 200;

export function createMemorySlice({ set, get, client, attempt }: SliceContext): MemorySlice {
  const reload = async () => {
    const { query, kind } = get().memoryFilter;
    const memories = await client.commands['memory.list']({ limit: MEMORY_LIMIT, ...(query.trim() ? { query: query.trim() } : {}), ...(kind ? { kind } : {}) });
    // A later filter's answer wins: an answer for one the operator has since changed is dropped.
    if (get().memoryFilter.query === query && get().memoryFilter.kind === kind) set({ memories });
  };
  /** A memory forgotten elsewhere (the command line, another window) since the list was read: the list is read again and the operator told so. */
  const unlessGone = async (id: string, action: () => Promise<void>) => {
    try {
      await action();
    } catch (error) {
      if (!(ArchonError.isInstance(error) && error.code === 'NOT_FOUND')) throw error;
      await reload();
      throw new Error(`Memory ${id} was forgotten since this list was shown, so it was left out of the list.`, { cause: error });
    }
  };
  return {
    memories: [],
    memoryFilter: { query: '', kind: null },
    loadMemories: (filter) =>
      attempt(async () => {
        set({ memoryFilter: filter });
        await reload();
      }),
    updateMemory: (id, change) =>
      attempt(() =>
        unlessGone(id, async () => {
          const updated = await client.commands['memory.update']({ id, ...change });
          set({ memories: get().memories.map((item) => (item.id === id ? updated : item)) });
        }),
      ),
    forgetMemory: (id) =>
      attempt(() =>
        unlessGone(id, async () => {
          await client.commands['memory.forget']({ id });
          set({ memories: get().memories.filter((item) => item.id !== id) });
        }),
      ),
  };
}
