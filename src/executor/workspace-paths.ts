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

/** The workspace a call may touch, and the folders kept from every tool even when the workspace holds them (Archon's data, the auditor's keys). */
export interface Workspace {
  path: string;
  hidden: readonly string[];
}

/** The workspace as real paths: its root, and the hidden folders within it (one that holds the whole workspace, like the home folder, hides nothing of it). */
export interface WorkspaceScope {
  root: string;
  hidden: string[];
}

export function workspaceScope(workspace: Workspace): WorkspaceScope {
  const root = realpathSync(workspace.path);
  return { root, hidden: workspace.hidden.map(realPathOfNearest).filter((folder) => !isInside(folder, root)) };
}

/** Whether a real path is one a tool may touch: in the workspace and in none of its hidden folders. */
export function inScope(scope: WorkspaceScope, real: string): boolean {
  return isInside(scope.root, real) && !scope.hidden.some((folder) => isInside(folder, real));
}

/**
 * Resolves a path the model gave against the workspace: its real path (symbolic links followed as
 * far as the path exists). `..` escapes, absolute paths elsewhere, links that lead outside and the
 * hidden folders are denied. This check alone is not enough against a link that changes after it;
 * workspace-files.ts checks what was actually opened.
 */
export function realPathInWorkspace(workspace: Workspace, requested: string): { scope: WorkspaceScope; real: string } {
  const scope = workspaceScope(workspace);
  const target = resolve(scope.root, requested);
  if (!isInside(scope.root, target)) {
    throw new PathDenied(`"${requested}" is outside the workspace. Use a path relative to the workspace (e.g. "notes/list.md"); nothing outside it can be touched.`);
  }
  const real = realPathOfNearest(target);
  if (!isInside(scope.root, real)) {
    throw new PathDenied(`"${requested}" leads outside the workspace through a symbolic link. Use a path whose folders are inside the workspace.`);
  }
  if (!inScope(scope, real)) {
    throw new PathDenied(`"${requested}" is in a folder Archon keeps from every tool (its data or its auditor's keys). Work with other files of the workspace.`);
  }
  return { scope, real };
}

export function resolveInWorkspace(workspace: Workspace, requested: string): string {
  return realPathInWorkspace(workspace, requested).real;
}

export function workspaceRelative(workspace: string, absolute: string): string {
  return relative(realpathSync(workspace), absolute) || '.';
}
