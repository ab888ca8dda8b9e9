import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime, type ArchonRuntime } from '../src/core/runtime';

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

export function ms(value: number): string {
  return `${value.toFixed(value < 10 ? 3 : 1)} ms`;
}

/** A runtime on a throwaway data dir, removed afterwards. */
export async function withRuntime<T>(use: (runtime: ArchonRuntime) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'archon-bench-'));
  const runtime = createRuntime({ dataDir: dir });
  try {
    return await use(runtime);
  } finally {
    runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One figure; `flag`, when given, marks it on its own line (a figure that shows something went wrong). */
export function line(name: string, value: string, target?: string, flag?: string): void {
  process.stdout.write(`${name.padEnd(52)} ${value.padStart(14)}${target ? `   (target ${target})` : ''}${flag ? `   <<< ${flag}` : ''}\n`);
}
