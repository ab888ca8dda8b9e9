import type { CommandHazard } from './schemas/approval';

/*
 * The dangerous parts of a shell command, for the person approving it: rules over the syntax tree
 * of tree-sitter's bash grammar, which the caller parses. A reader's aid, not a sandbox: a command
 * word built at run time, or text that does not parse, is said to be unreadable rather than guessed.
 */

/** The part of a tree-sitter node these rules read. */
export interface ShellNode {
  readonly type: string;
  readonly text: string;
  readonly isMissing: boolean;
  readonly children: readonly ShellNode[];
  readonly namedChildren: readonly ShellNode[];
  childForFieldName(name: string): ShellNode | null;
  childrenForFieldName(name: string): readonly ShellNode[];
}

/** Parses bash text into its `program` node, or null when the parser gives up. */
export type ParseShell = (text: string) => ShellNode | null;

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'ash', 'busybox']);
const DELETERS = new Set(['rm', 'rmdir', 'unlink', 'shred']);
const NETWORK = new Set(['curl', 'wget', 'nc', 'ncat', 'netcat', 'socat', 'ssh', 'scp', 'sftp', 'ftp', 'telnet', 'rsync']);
const INTERPRETERS = new Set(['python', 'python2', 'python3', 'node', 'deno', 'bun', 'perl', 'ruby', 'php', 'lua', 'osascript']);
const INLINE_CODE_FLAGS = new Set(['-c', '-e', '-E', '-r', '--eval']);
const SOURCES = new Set(['source', '.']);
const ELEVATORS = new Set(['sudo', 'doas', 'pkexec', 'su']);
/** Words that run the command after them, with their options that take a value. */
const PREFIXES: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['sudo', new Set(['-u', '-g', '-C', '-h', '-p', '-U', '-r', '-t', '-D'])],
  ['doas', new Set(['-u', '-C'])],
  ['env', new Set(['-u', '-C', '-S'])],
  ['xargs', new Set(['-n', '-I', '-L', '-P', '-d', '-E', '-s', '-a'])],
  ['nice', new Set(['-n'])],
  ['timeout', new Set(['-s', '-k'])],
  ['nohup', new Set()],
  ['time', new Set()],
  ['command', new Set()],
  ['exec', new Set()],
  ['builtin', new Set()],
  ['stdbuf', new Set()],
]);
const WRITES = new Set(['>', '>>', '&>', '&>>', '>|', '>&']);
const SAFE_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);
/** `sh -c "…"` and `eval` are read again inside, this many levels deep at most. */
const MAX_DEPTH = 3;

type Word = string | null;

/** A word after quote removal, or null when its value is only known at run time. */
function literal(node: ShellNode): Word {
  switch (node.type) {
    case 'word':
      return node.text.replace(/\\(.)/gs, '$1');
    case 'command_name':
    case 'concatenation':
      return joined(node.namedChildren);
    case 'number':
      return node.text;
    case 'raw_string':
      return node.text.slice(1, -1);
    case 'string':
      return node.namedChildren.every((child) => child.type === 'string_content') ? node.text.slice(1, -1).replace(/\\([$`"\\])/g, '$1') : null;
    default:
      return null;
  }
}

function joined(nodes: readonly ShellNode[]): Word {
  const parts = nodes.map(literal);
  return parts.every((part) => part !== null) ? parts.join('') : null;
}

function basename(word: string): string {
  return word.slice(word.lastIndexOf('/') + 1);
}

/** A redirection target outside the workspace: absolute (but not /dev/null and the like), in a home folder, or climbing out with `..`. */
function leavesWorkspace(target: string): boolean {
  if (target.startsWith('/')) return !SAFE_TARGETS.has(target);
  return target.startsWith('~') || target.startsWith('$HOME') || target.startsWith('${HOME}') || target.split('/').includes('..');
}

class Reader {
  readonly hazards: CommandHazard[] = [];

  constructor(private readonly parse: ParseShell) {}

  flag(kind: CommandHazard['kind'], text: string): void {
    this.hazards.push({ kind, text });
  }

  read(source: string, depth: number): void {
    const root = depth > MAX_DEPTH ? null : this.parse(source);
    if (root === null) this.flag('unreadable', source);
    else this.walk(root, depth);
  }

  /** `fed`: the node's standard input is a pipe or text from the command line. */
  walk(node: ShellNode, depth: number, fed = false): void {
    if (node.type === 'ERROR' || node.isMissing) return this.flag('unreadable', node.text || 'the end of the command');
    if (node.type === 'command') this.command(node, depth, fed);
    if (node.type === 'file_redirect') this.redirect(node);
    if (node.type === 'pipeline') return this.pipeline(node, depth);
    const bodyFed = node.type === 'redirected_statement' && (fed || node.childrenForFieldName('redirect').some(feedsText));
    node.namedChildren.forEach((child, index) => this.walk(child, depth, index === 0 && bodyFed));
  }

  pipeline(node: ShellNode, depth: number): void {
    let piped = false;
    for (const child of node.children) {
      if (child.type === '|' || child.type === '|&') piped = true;
      else this.walk(child, depth, piped);
    }
  }

  redirect(node: ShellNode): void {
    const operator = node.children.find((child) => WRITES.has(child.type));
    const destination = node.childForFieldName('destination');
    if (!operator || !destination || destination.type === 'number') return;
    const target = literal(destination);
    if (leavesWorkspace(target ?? destination.text)) this.flag('outside_redirect', `${operator.text} ${target ?? destination.text}`);
    else if (target === null) this.flag('unreadable', node.text);
  }

  command(node: ShellNode, depth: number, fed: boolean): void {
    const name = node.childForFieldName('name');
    if (!name) return;
    const words = [literal(name), ...node.childrenForFieldName('argument').map(literal)];
    this.words(words, node.text, depth, fed || node.childrenForFieldName('redirect').some(feedsText));
  }

  /** Judges one simple command given as words; `fed` when its standard input is text from the command line or a pipe. */
  words(words: readonly Word[], text: string, depth: number, fed: boolean): void {
    const at = this.skipPrefixes(words, text);
    const name = words[at];
    if (name === undefined) return;
    if (name === null) return this.flag('unreadable', text);
    const command = basename(name);
    const rest = words.slice(at + 1);
    if (DELETERS.has(command) || (command === 'git' && rest[0] === 'clean') || (command === 'find' && rest.includes('-delete'))) this.flag('deletion', text);
    if (NETWORK.has(command)) this.flag('network', text);
    if (command === 'find') this.findExec(rest, text, depth);
    if (command === 'eval') this.inner(rest, text, depth);
    if (command === 'alias' && rest.length > 0) this.flag('renames_commands', text);
    if (SOURCES.has(command)) this.flag('runs_code', text);
    if (INTERPRETERS.has(command) && rest.some((word) => word === null || INLINE_CODE_FLAGS.has(word))) this.flag('runs_code', text);
    if (SHELLS.has(command)) this.shell(rest, text, depth, fed);
  }

  /** Steps over `sudo`, `env X=1`, `xargs -n 1` and the like, flagging elevation; returns where the real command word is. */
  skipPrefixes(words: readonly Word[], text: string): number {
    let at = 0;
    while (at < words.length) {
      const word = words[at];
      if (word === null || word === undefined) return at;
      const options = PREFIXES.get(basename(word));
      if (ELEVATORS.has(basename(word))) this.flag('sudo', text);
      if (!options) return at;
      at++;
      for (let next = words[at]; next && (next.startsWith('-') || /^\w+=/.test(next) || (basename(word) === 'timeout' && /^\d/.test(next))); next = words[at]) at += options.has(next) ? 2 : 1;
    }
    return at;
  }

  findExec(rest: readonly Word[], text: string, depth: number): void {
    rest.forEach((word, index) => {
      if (word !== '-exec' && word !== '-execdir' && word !== '-ok' && word !== '-okdir') return;
      const end = rest.findIndex((next, at) => at > index && (next === ';' || next === '+'));
      this.words(rest.slice(index + 1, end < 0 ? undefined : end), text, depth, false);
    });
  }

  /** `eval` words, or a shell's `-c` string: read again as a command of their own. */
  inner(words: readonly Word[], text: string, depth: number): void {
    if (words.some((word) => word === null)) return this.flag('unreadable', text);
    this.read(words.join(' '), depth + 1);
  }

  shell(rest: readonly Word[], text: string, depth: number, fed: boolean): void {
    const script = rest.findIndex((word) => word === '-c' || (word !== null && /^-\w*c\w*$/.test(word) && !word.startsWith('--')));
    if (script >= 0) return this.inner(rest.slice(script + 1, script + 2), text, depth);
    const file = rest.find((word) => word === null || !word.startsWith('-'));
    this.flag(file === undefined && fed ? 'pipe_to_shell' : 'runs_code', text);
  }
}

/** A here-document, here-string or `< file`: text on the command's standard input. */
function feedsText(redirect: ShellNode): boolean {
  return redirect.type !== 'file_redirect' || redirect.children.some((child) => child.type === '<');
}

/** The dangerous parts of `command`, in the order they appear, read with `parse`. */
export function commandHazards(command: string, parse: ParseShell): CommandHazard[] {
  const reader = new Reader(parse);
  reader.read(command, 0);
  return reader.hazards;
}

/** What each kind of hazard means, as the approval dialog says it. */
export const HAZARD_MEANING: Record<CommandHazard['kind'], string> = {
  deletion: 'deletes files',
  outside_redirect: 'writes outside the workspace',
  pipe_to_shell: 'pipes text into a shell, which runs it',
  sudo: 'asks for administrator rights',
  network: 'reaches the network',
  runs_code: 'runs code that is not shown here',
  renames_commands: 'renames commands, so later words may not mean what they say',
  unreadable: 'could not be read (the command is built at run time)',
};
