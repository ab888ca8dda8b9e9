import { randomBytes } from 'node:crypto';
import { constants, readlinkSync } from 'node:fs';
import type { Dirent } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath, rename, rm, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { inScope, PathDenied, realPathInWorkspace, type Workspace, type WorkspaceScope } from './workspace-paths';

/*
 * File access that holds against a symbolic link changing between the check and the use: every
 * file and folder is opened without following a final link (O_NOFOLLOW), and what was opened is
 * checked to lie in the workspace before a byte is read or written. On Linux, folders are walked
 * and files created relative to an opened folder (through /proc/self/fd, like openat), so nothing
 * is ever created outside; on macOS, where Node has neither openat nor F_GETPATH, the descriptor's
 * device and inode are compared with a fresh lstat of its resolved path.
 */

const FOLLOWS_FD_LINKS = process.platform === 'linux';
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY } = constants;

const changed = (requested: string) => new PathDenied(`"${requested}" changed while it was being opened (a symbolic link now leads outside the workspace); nothing was read or written.`);

/** `name` inside an opened folder, addressed through the descriptor so no path component is looked up again. */
function at(folder: FileHandle, name: string): string {
  return `/proc/self/fd/${folder.fd}/${name}`;
}

/** Refuses unless the opened descriptor is `expected`'s file and lies in the workspace, outside its hidden folders. */
async function verifyOpened(handle: FileHandle, scope: WorkspaceScope, expected: string, requested: string): Promise<void> {
  if (FOLLOWS_FD_LINKS) {
    if (!inScope(scope, readlinkSync(`/proc/self/fd/${handle.fd}`))) throw changed(requested);
    return;
  }
  const [opened, real] = await Promise.all([handle.stat(), realpath(expected)]);
  const now = await lstat(real);
  if (!inScope(scope, real) || opened.dev !== now.dev || opened.ino !== now.ino) throw changed(requested);
}

async function openChecked(path: string, flags: number, scope: WorkspaceScope, requested: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, flags | O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw changed(requested);
    throw error;
  }
  try {
    await verifyOpened(handle, scope, path, requested);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Opens a workspace file for reading; the handle is of a file proven to lie in the workspace. */
export async function openWorkspaceFile(workspace: Workspace, requested: string): Promise<FileHandle> {
  const { scope, real } = realPathInWorkspace(workspace, requested);
  return openChecked(real, O_RDONLY, scope, requested);
}

/** Opens (and with `create`, makes) a workspace folder, one component at a time on Linux, none of them a link. */
async function openWorkspaceFolder(scope: WorkspaceScope, folder: string, requested: string, create: boolean): Promise<FileHandle> {
  if (!FOLLOWS_FD_LINKS) {
    if (create) await mkdir(folder, { recursive: true });
    return openChecked(folder, O_RDONLY | O_DIRECTORY, scope, requested);
  }
  let handle = await openChecked(scope.root, O_RDONLY | O_DIRECTORY, scope, requested);
  try {
    for (const name of relative(scope.root, folder).split(sep).filter(Boolean)) {
      if (create) await mkdir(at(handle, name)).catch((error: NodeJS.ErrnoException) => (error.code === 'EEXIST' ? undefined : Promise.reject(error)));
      const next = await openChecked(at(handle, name), O_RDONLY | O_DIRECTORY, scope, requested);
      await handle.close();
      handle = next;
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The entries of a workspace folder, listed through the opened and checked folder; and its real path. */
export async function readWorkspaceFolder(workspace: Workspace, requested: string): Promise<{ folder: string; entries: Dirent[] }> {
  const { scope, real } = realPathInWorkspace(workspace, requested);
  const handle = await openWorkspaceFolder(scope, real, requested, false);
  try {
    return { folder: real, entries: await readdir(FOLLOWS_FD_LINKS ? `/proc/self/fd/${handle.fd}` : real, { withFileTypes: true }) };
  } finally {
    await handle.close();
  }
}

/** What a write replaces, read through the checked folder. */
async function readPrevious(path: string, scope: WorkspaceScope, requested: string): Promise<Buffer | null> {
  let handle: FileHandle;
  try {
    handle = await openChecked(path, O_RDONLY, scope, requested);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    return (await handle.stat()).isFile() ? await handle.readFile() : null;
  } finally {
    await handle.close();
  }
}

/**
 * Replaces a workspace file atomically: the content goes to a new temporary file (O_EXCL) in the
 * checked folder, then one rename puts it in place. Returns the previous content, if any, and the file's real path.
 */
export async function replaceWorkspaceFile(workspace: Workspace, requested: string, content: string | Buffer): Promise<{ previous: Buffer | null; real: string }> {
  const { scope, real } = realPathInWorkspace(workspace, requested);
  const folder = await openWorkspaceFolder(scope, dirname(real), requested, true);
  const inFolder = (name: string) => (FOLLOWS_FD_LINKS ? at(folder, name) : join(dirname(real), name));
  const name = basename(real);
  const temporary = inFolder(`.${randomBytes(6).toString('hex')}.archon-tmp`);
  try {
    const previous = await readPrevious(inFolder(name), scope, requested);
    const handle = await openChecked(temporary, O_WRONLY | O_CREAT | O_EXCL, scope, requested);
    try {
      await handle.writeFile(content);
    } finally {
      await handle.close();
    }
    await rename(temporary, inFolder(name));
    return { previous, real };
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  } finally {
    await folder.close();
  }
}

/** The current content of a workspace file (null when there is none), read without following a final link. */
export async function readWorkspaceFileIfAny(workspace: Workspace, requested: string): Promise<Buffer | null> {
  const { scope, real } = realPathInWorkspace(workspace, requested);
  return readPrevious(real, scope, requested);
}

/** Deletes a workspace file through its checked folder; a final link is removed, never followed. */
export async function removeWorkspaceFile(workspace: Workspace, requested: string): Promise<void> {
  const { scope, real } = realPathInWorkspace(workspace, requested);
  const folder = await openWorkspaceFolder(scope, dirname(real), requested, false);
  try {
    await unlink(FOLLOWS_FD_LINKS ? at(folder, basename(real)) : real);
  } finally {
    await folder.close();
  }
}
