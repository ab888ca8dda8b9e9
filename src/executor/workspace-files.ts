import { randomBytes } from 'node:crypto';
import { constants, readlinkSync } from 'node:fs';
import type { Dirent } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { isInside, PathDenied, realPathInWorkspace } from './workspace-paths';

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

/** Refuses unless the opened descriptor is `expected`'s file and lies in the workspace. */
async function verifyOpened(handle: FileHandle, root: string, expected: string, requested: string): Promise<void> {
  if (FOLLOWS_FD_LINKS) {
    if (!isInside(root, readlinkSync(`/proc/self/fd/${handle.fd}`))) throw changed(requested);
    return;
  }
  const [opened, real] = await Promise.all([handle.stat(), realpath(expected)]);
  const now = await lstat(real);
  if (!isInside(root, real) || opened.dev !== now.dev || opened.ino !== now.ino) throw changed(requested);
}

async function openChecked(path: string, flags: number, root: string, requested: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, flags | O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw changed(requested);
    throw error;
  }
  try {
    await verifyOpened(handle, root, path, requested);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Opens a workspace file for reading; the handle is of a file proven to lie in the workspace. */
export async function openWorkspaceFile(workspace: string, requested: string): Promise<FileHandle> {
  const { root, real } = realPathInWorkspace(workspace, requested);
  return openChecked(real, O_RDONLY, root, requested);
}

/** Opens (and with `create`, makes) a workspace folder, one component at a time on Linux, none of them a link. */
async function openWorkspaceFolder(root: string, folder: string, requested: string, create: boolean): Promise<FileHandle> {
  if (!FOLLOWS_FD_LINKS) {
    if (create) await mkdir(folder, { recursive: true });
    return openChecked(folder, O_RDONLY | O_DIRECTORY, root, requested);
  }
  let handle = await openChecked(root, O_RDONLY | O_DIRECTORY, root, requested);
  try {
    for (const name of relative(root, folder).split(sep).filter(Boolean)) {
      if (create) await mkdir(at(handle, name)).catch((error: NodeJS.ErrnoException) => (error.code === 'EEXIST' ? undefined : Promise.reject(error)));
      const next = await openChecked(at(handle, name), O_RDONLY | O_DIRECTORY, root, requested);
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
export async function readWorkspaceFolder(workspace: string, requested: string): Promise<{ folder: string; entries: Dirent[] }> {
  const { root, real } = realPathInWorkspace(workspace, requested);
  const handle = await openWorkspaceFolder(root, real, requested, false);
  try {
    return { folder: real, entries: await readdir(FOLLOWS_FD_LINKS ? `/proc/self/fd/${handle.fd}` : real, { withFileTypes: true }) };
  } finally {
    await handle.close();
  }
}

/** What a write replaces, read through the checked folder. */
async function readPrevious(folder: FileHandle, path: string, root: string, requested: string): Promise<Buffer | null> {
  let handle: FileHandle;
  try {
    handle = await openChecked(path, O_RDONLY, root, requested);
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
 * checked folder, then one rename puts it in place. Returns the previous content, if any.
 */
export async function replaceWorkspaceFile(workspace: string, requested: string, content: string): Promise<Buffer | null> {
  const { root, real } = realPathInWorkspace(workspace, requested);
  const folder = await openWorkspaceFolder(root, dirname(real), requested, true);
  const inFolder = (name: string) => (FOLLOWS_FD_LINKS ? at(folder, name) : join(dirname(real), name));
  const name = basename(real);
  const temporary = inFolder(`.${randomBytes(6).toString('hex')}.archon-tmp`);
  try {
    const previous = await readPrevious(folder, inFolder(name), root, requested);
    const handle = await openChecked(temporary, O_WRONLY | O_CREAT | O_EXCL, root, requested);
    try {
      await handle.writeFile(content);
    } finally {
      await handle.close();
    }
    await rename(temporary, inFolder(name));
    return previous;
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  } finally {
    await folder.close();
  }
}
