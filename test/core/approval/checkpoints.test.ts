import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(__dirname, '../../../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** A value import (not `import type`) of the functions that put a request to a person. */
const ASKS = /import\s*\{[^}]*\b(?<!type )(requestApproval|decide)\b[^}]*\}\s*from\s*'(\.\/|[^']*\/approval\/)(approval-gate|edit-loop)'/;

describe('approval checkpoints', () => {
  it("only approval/checkpoints.ts asks a person: no other module calls the gate or the edit loop (besides the gate's re-ask loop)", () => {
    const askers = sources(SRC)
      .filter((file) => ASKS.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file).replaceAll('\\', '/'));
    expect(askers.sort()).toEqual(['core/approval/checkpoints.ts', 'core/approval/edit-loop.ts']);
  });
});
