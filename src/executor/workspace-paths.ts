import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/** A path the model asked for that lies outside the workspace; the message says what it may do instead. */
export class PathDenied extends Error {}

/** Whether `candidate` is `root` or lies under it (lexically; both absolute). */
export function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && rel.split(sep)[0] !== '..');
}

/** The real path of `path`, or of its nearest existing ancestor joined with the rest. */
function realPathOfNearest(path: string): string {
  let existing = path;
  const missing: string[] = [];
  for (let depth = 0; depth < 4096; depth++) {
    try {
      return resolve(realpathSync(existing), ...missing.reverse());
    } catch {
      const parent = dirname(existing);
      if (parent === existing) break;
      missing.push(existing.slice(parent.length + 1));
      existing = parent;
    }
  }
  return path;
}

/**
 * Resolves a path the model gave against the workspace: its real path (symbolic links followed as
 * far as the path exists) and the workspace root's. `..` escapes, absolute paths elsewhere and links
 * that lead outside are denied. This check alone is not enough against a link that changes after
 * it; workspace-files.ts checks what was actually opened.
 */
export function realPathInWorkspace(workspace: string, requested: string): { root: string; real: string } {
  const root = realpathSync(workspace);
  const target = resolve(root, requested);
  if (!isInside(root, target)) {
    throw new PathDenied(`"${requested}" is outside the workspace. Use a path relative to the workspace (e.g. "notes/list.md"); nothing outside it can be touched.`);
  }
  const real = realPathOfNearest(target);
  if (!isInside(root, real)) {
    throw new PathDenied(`"${requested}" leads outside the workspace through a symbolic link. Use a path whose folders are inside the workspace.`);
  }
  return { root, real };
}

export function resolveInWorkspace(workspace: string, requested: string): string {
  return realPathInWorkspace(workspace, requested).real;
}

export function workspaceRelative(workspace: string, absolute: string): string {
  return relative(realpathSync(workspace), absolute) || '.';
}
