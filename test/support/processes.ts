import { execFileSync } from 'node:child_process';

/** Processes whose command line contains `marker` (from the process table, as `ps` shows it). */
export function processesMatching(marker: string): string[] {
  const table = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return table
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}

/** A unique sleep length, so a test can find exactly its own processes. */
export function uniqueSleepSeconds(): string {
  return `95.${Math.floor(Math.random() * 1e6)}`;
}
