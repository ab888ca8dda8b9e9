import { spawnSync } from 'node:child_process';
import { accessSync, closeSync, constants, existsSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { bubblewrapRoot } from '../../shared/bubblewrap-root';
import type { SandboxMode } from '../../shared/schemas/settings';
import type { McpFailure } from './mcp-failure';
import type { StdioLaunch } from './stdio-transport';

export interface StdioServer {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  maxMessageBytes?: number;
}

export interface Confinement {
  workspace: string;
  sandbox: SandboxMode;
  allowNetwork: boolean;
  /** Folders no server may see even inside the workspace (the data dir, the home folder, the audit key folder). */
  hidden: readonly string[];
}

const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A command as found (`found`, maybe a symlink such as nvm's bin/npx) and the file it is (`program`). */
interface Found {
  found: string;
  program: string;
}

/** The command as the operator's PATH finds it, or null. */
export function resolveCommand(command: string, cwd: string, path = process.env.PATH ?? SYSTEM_PATH): Found | null {
  if (command.includes('/')) {
    const full = isAbsolute(command) ? command : resolve(cwd, command);
    return executable(full) ? { found: full, program: realpathSync(full) } : null;
  }
  for (const folder of path.split(delimiter).filter(Boolean)) {
    const candidate = join(folder, command);
    if (executable(candidate)) return { found: candidate, program: realpathSync(candidate) };
  }
  return null;
}

const SHEBANG_BYTES = 128;

function runsOnNode(program: string): boolean {
  const buffer = Buffer.alloc(SHEBANG_BYTES);
  const fd = openSync(program, 'r');
  try {
    const line = buffer.subarray(0, readSync(fd, buffer, 0, SHEBANG_BYTES, 0)).toString('latin1').split('\n')[0] ?? '';
    return /^#!\S*(\/env(\s+-\S+)*\s+|\/)node(\s|$)/.test(line);
  } finally {
    closeSync(fd);
  }
}

/**
 * The node a `#!… node` script (npx, npm, a package's bin) will run on: the one beside the command
 * as found (nvm and the official tarballs keep bin/npx next to bin/node), else the first on PATH.
 */
export function nodeFor(command: Found, path = process.env.PATH ?? SYSTEM_PATH): string | null {
  if (!runsOnNode(command.program)) return null;
  return resolveCommand('node', dirname(command.found), `${dirname(command.found)}${delimiter}${path}`)?.program ?? null;
}

const MAX_DEPTH = 32;
const NODE_MODULES = `${sep}node_modules${sep}`;

/**
 * The folders a file's package may be, widest first: for a file in node_modules, the folder holding
 * its outermost node_modules, then that node_modules; else the nearest folder with a package.json.
 */
function packageFolders(file: string): string[] {
  const at = file.indexOf(NODE_MODULES);
  if (at >= 0) return [file.slice(0, at), file.slice(0, at + NODE_MODULES.length - 1)];
  let folder = dirname(file);
  for (let depth = 0; depth < MAX_DEPTH && dirname(folder) !== folder; depth++, folder = dirname(folder)) {
    if (existsSync(join(folder, 'package.json'))) return [folder];
  }
  return [];
}

function contains(folder: string, path: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : `${folder}${sep}`);
}

/** An absolute argument that names something on disk, resolved through symlinks. */
function existingPath(arg: string): string | null {
  if (!isAbsolute(arg) || !existsSync(arg)) return null;
  return realpathSync(arg);
}

/**
 * What a server needs to read besides the system: its program's install folder and package, and for
 * each file its arguments name (its script), that file's package, else its folder; a folder argument
 * is opened itself, nothing around it. A folder that holds the workspace (the rest of a monorepo, the
 * host's /tmp) or a hidden one (the home folder, the data dir) is never opened whole; inside a
 * hidden folder only a package is (a file's folder there may hold secrets: ~/.aws, ~/.local). What
 * is left is the file alone, and nothing for a folder (the workspace is there anyway).
 */
function serverFiles(programs: readonly string[], args: readonly string[], workspace: string, hidden: readonly string[]): string[] {
  const tooWide = (folder: string) => contains(folder, workspace) || hidden.some((path) => contains(folder, path));
  const openable = (folder: string) => !tooWide(folder) && !hidden.some((path) => contains(path, folder));
  const widestOf = (file: string, folders: readonly string[]) => folders.find((folder) => !tooWide(folder)) ?? file;
  const folders = new Set<string>();
  for (const program of programs) {
    const install = dirname(dirname(program));
    if (openable(install)) folders.add(install);
    folders.add(widestOf(program, packageFolders(program)));
  }
  for (const path of args.map(existingPath)) {
    if (path === null) continue;
    if (statSync(path).isDirectory()) {
      if (!tooWide(path) && !contains(workspace, path)) folders.add(path);
    } else {
      folders.add(widestOf(path, [...packageFolders(path), ...(openable(dirname(path)) ? [dirname(path)] : [])]));
    }
  }
  return [...folders];
}

let bubblewrap: boolean | undefined;

function bubblewrapWorks(): boolean {
  bubblewrap ??= spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--die-with-parent', '/bin/true'], { timeout: 10_000 }).status === 0;
  return bubblewrap;
}

/**
 * Nothing of Archon's own environment reaches a server: only what it needs, and its own `env`. Its
 * node (for npx and other node scripts) is on PATH; HOME, and so npm's cache, is the sandbox's
 * private /tmp, never the workspace (unconfined, the operator's own home, as any program they run).
 */
function serverEnvironment(server: StdioServer, programs: readonly string[], sandboxed: boolean): NodeJS.ProcessEnv {
  const path = [...new Set(programs.map((program) => dirname(program))), SYSTEM_PATH].join(delimiter);
  const home = sandboxed ? '/tmp' : homedir();
  return { PATH: path, HOME: home, npm_config_cache: join(home, '.npm'), LANG: 'C.UTF-8', TMPDIR: '/tmp', ...server.env };
}

/** A hidden folder as given and as its real path: the sandbox must cover it however the workspace reaches it. */
function realPaths(paths: readonly string[]): string[] {
  return [...new Set(paths.flatMap((path) => (existsSync(path) ? [path, realpathSync(path)] : [path])))];
}

/**
 * How a stdio server is started: inside bubblewrap (the workspace its folder and the only one it
 * may write; the network only when allowed; its own files readable), or unconfined when the
 * operator turned the sandbox off. A command that cannot be found is a failure, never a guess.
 */
export function stdioLaunch(name: string, server: StdioServer, confinement: Confinement): { ok: true; launch: StdioLaunch } | { ok: false; failure: McpFailure } {
  // Compared with hidden folders by real path: the Test button's default workspace may be named through a symlink.
  const workspace = existsSync(confinement.workspace) ? realpathSync(confinement.workspace) : confinement.workspace;
  const command = resolveCommand(server.command, workspace);
  if (!command) return { ok: false, failure: { kind: 'not_found', message: `MCP server "${name}": the command "${server.command}" was not found (not on PATH, or not executable). Install it or fix "command" in its configuration.` } };
  const { program } = command;
  const node = nodeFor(command);
  const programs = node ? [program, node] : [program];
  const args = server.args ?? [];
  const env = serverEnvironment(server, programs, confinement.sandbox !== 'off');
  const limit = server.maxMessageBytes === undefined ? {} : { maxMessageBytes: server.maxMessageBytes };
  if (confinement.sandbox === 'off') return { ok: true, launch: { file: program, args, env, cwd: workspace, ...limit } };
  if (process.platform !== 'linux' || !bubblewrapWorks()) {
    return { ok: false, failure: { kind: 'sandbox', message: `MCP server "${name}" was not started: bubblewrap, the OS sandbox its process runs in, is not available here. Install bubblewrap, or set sandbox to "off" in Settings.` } };
  }
  const hidden = realPaths(confinement.hidden);
  const hiddenInWorkspace = hidden.filter((path) => path !== workspace && path.startsWith(`${workspace}${sep}`) && existsSync(path));
  const root = bubblewrapRoot({ workspace, allowNetwork: confinement.allowNetwork, hiddenInWorkspace, readable: serverFiles(programs, args, workspace, hidden) });
  return { ok: true, launch: { file: 'bwrap', args: [...root, '--', program, ...args], env, cwd: workspace, ...limit } };
}
