import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './support/temp-dir';

const root = fileURLToPath(new URL('..', import.meta.url));
const tempDir = useTempDirs();

function depcruise(cwd: string) {
  const bin = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');
  return spawnSync(process.execPath, [bin, 'src', '--config', join(root, '.dependency-cruiser.cjs')], { cwd, encoding: 'utf8', timeout: 60_000 });
}

function plant(files: Record<string, string>): string {
  const dir = tempDir();
  cpSync(join(root, 'tsconfig.json'), join(dir, 'tsconfig.json'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  return dir;
}

describe('layer check (dependency-cruiser)', () => {
  it('passes on the tree', () => {
    const result = depcruise(root);
    expect(result.status, result.stdout + result.stderr).toBe(0);
  });

  it.each([
    ['shared importing core', { 'src/shared/a.ts': "import { b } from '../core/b';\nexport const a = b;\n", 'src/core/b.ts': 'export const b = 1;\n' }, 'shared-imports-only-itself'],
    ['core importing electron', { 'src/core/b.ts': "import { app } from 'electron';\nexport const b = app;\n" }, 'electron-only-in-main-and-preload'],
    ['core importing main', { 'src/core/b.ts': "import { m } from '../main/m';\nexport const b = m;\n", 'src/main/m.ts': 'export const m = 1;\n' }, 'core-imports-only-shared'],
    ['the renderer importing core', { 'src/renderer/src/r.ts': "import { b } from '../../core/b';\nexport const r = b;\n", 'src/core/b.ts': 'export const b = 1;\n' }, 'renderer-imports-only-shared'],
    ['the preload importing core', { 'src/preload/p.ts': "import { b } from '../core/b';\nexport const p = b;\n", 'src/core/b.ts': 'export const b = 1;\n' }, 'preload-imports-only-shared'],
    ['main importing the auditor', { 'src/main/m.ts': "import { a } from '../auditor/a';\nexport const m = a;\n", 'src/auditor/a.ts': 'export const a = 1;\n' }, 'main-imports-only-shared-core'],
    ['core importing the auditor', { 'src/core/b.ts': "import { a } from '../auditor/a';\nexport const b = a;\n", 'src/auditor/a.ts': 'export const a = 1;\n' }, 'core-imports-only-shared'],
    ['the executor importing the auditor', { 'src/executor/e.ts': "import { a } from '../auditor/a';\nexport const e = a;\n", 'src/auditor/a.ts': 'export const a = 1;\n' }, 'executor-imports-only-shared'],
    ['shared using a Node built-in', { 'src/shared/fsy.ts': "import { readFileSync } from 'node:fs';\nexport const f = readFileSync;\n" }, 'shared-and-renderer-use-no-node-builtins'],
    ['the openai SDK outside the model gateway', { 'src/core/memory/m.ts': "import OpenAI from 'openai';\nexport const m = OpenAI;\n" }, 'model-servers-only-through-the-model-gateway'],
    ['a model client made outside the model gateway', { 'src/core/agent/a.ts': "import { m } from '../model/model-client';\nexport const a = m;\n", 'src/core/model/model-client.ts': 'export const m = 1;\n' }, 'model-servers-only-through-the-model-gateway'],
    ['a tool process called outside the tool gateway', { 'src/core/undo/u.ts': "import { Pool } from '../tools/tool-worker-pool';\nexport const u = Pool;\n", 'src/core/tools/tool-worker-pool.ts': 'export class Pool {}\n' }, 'tool-processes-only-through-the-tool-gateway'],
    ['a type-only circle in core', { 'src/core/a.ts': "import type { B } from './b';\nexport interface A { b: B }\n", 'src/core/b.ts': "import type { A } from './a';\nexport interface B { a: A }\n" }, 'no-circular-in-core'],
    ['a circle in core through three modules', { 'src/core/a.ts': "import { b } from './b';\nexport const a = () => b;\n", 'src/core/b.ts': "import { c } from './c';\nexport const b = () => c;\n", 'src/core/c.ts': "import type { A } from './d';\nexport const c: A | null = null;\n", 'src/core/d.ts': "import { a } from './a';\nexport type A = typeof a;\n" }, 'no-circular-in-core'],
    ['a capability importing the engine', { 'src/core/recovery/r.ts': "import { a } from '../agent/a';\nexport const r = a;\n", 'src/core/agent/a.ts': 'export const a = 1;\n' }, 'capabilities-import-only-the-kernel'],
    ['a capability importing another capability', { 'src/core/recovery/r.ts': "import { s } from '../subagents/s';\nexport const r = s;\n", 'src/core/subagents/s.ts': 'export const s = 1;\n' }, 'capabilities-import-only-the-kernel'],
    ['the engine importing a capability', { 'src/core/agent/a.ts': "import { r } from '../recovery/r';\nexport const a = r;\n", 'src/core/recovery/r.ts': 'export const r = 1;\n' }, 'capabilities-only-through-the-composition'],
    ['the kernel importing the memory capability', { 'src/core/run/k.ts': "import { m } from '../memory/run-memory';\nexport const k = m;\n", 'src/core/memory/run-memory.ts': 'export const m = 1;\n' }, 'capabilities-only-through-the-composition'],
  ])('fails on a planted violation: %s', (_what, files, rule) => {
    const result = depcruise(plant(files));
    expect(result.status).not.toBe(0);
    expect(result.stdout).toContain(rule);
  });
});
