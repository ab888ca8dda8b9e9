/**
 * The tools locked for one run: the locks placed on it and, read live at every question, those of the
 * runs above it, so a lock placed on a parent reaches a sub-agent that is already running.
 */
export class ToolLocks {
  private readonly own = new Set<string>();

  constructor(private readonly above: ToolLocks | null = null) {}

  /** Whether `tool` is locked for this run: the one answer admission, the tools offered and the gate read. */
  has(tool: string): boolean {
    return this.own.has(tool) || (this.above?.has(tool) ?? false);
  }

  /** Locks `tool` as this run's own; false when this run had locked it already. */
  add(tool: string): boolean {
    if (this.own.has(tool)) return false;
    this.own.add(tool);
    return true;
  }

  /** Every tool locked for this run, its own and those above it. */
  tools(): string[] {
    return [...new Set([...(this.above?.tools() ?? []), ...this.own])];
  }

  /** Locks of the runs above this one that it does not hold as its own yet. */
  inherited(): string[] {
    return this.above?.tools().filter((tool) => !this.own.has(tool)) ?? [];
  }
}
