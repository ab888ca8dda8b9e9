import type { CommandHazard } from './schemas/approval';

/*
 * The dangerous parts of a shell command, for the person approving it: deletions, writes outside
 * the workspace, pipes into a shell, and sudo. A reader's aid, not a sandbox: the command is split
 * into simple commands (quotes respected) and each is judged by its command word and redirections.
 */

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish']);
const DELETERS = new Set(['rm', 'rmdir', 'unlink', 'shred']);
/** Words that run the command after them: `sudo rm x` deletes as much as `rm x` does. */
const PREFIXES = new Set(['sudo', 'doas', 'env', 'nohup', 'time', 'command', 'exec', 'xargs', 'nice']);
const SAFE_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);
/** `sh -c "…"` is judged again inside, this many levels deep at most. */
const MAX_DEPTH = 3;

interface Simple {
  words: string[];
  redirects: string[];
  piped: boolean;
  text: string;
}

/** Splits at `;`, `&&`, `||`, `|`, `&` and newlines outside quotes; collects words (unquoted) and redirection targets. */
function simpleCommands(command: string): Simple[] {
  const result: Simple[] = [];
  let current: Simple = { words: [], redirects: [], piped: false, text: '' };
  let word: string | null = null;
  let redirecting = false;
  let start = 0;
  const endWord = () => {
    if (word === null) return;
    if (redirecting) current.redirects.push(word);
    else current.words.push(word);
    word = null;
    redirecting = false;
  };
  const endCommand = (at: number, piped: boolean) => {
    endWord();
    current.text = command.slice(start, at).trim();
    if (current.words.length > 0 || current.redirects.length > 0) result.push(current);
    current = { words: [], redirects: [], piped, text: '' };
  };
  for (let at = 0; at < command.length; at++) {
    const char = command[at] as string;
    if (char === "'" || char === '"') {
      const close = command.indexOf(char, at + 1);
      const end = close < 0 ? command.length : close;
      word = (word ?? '') + command.slice(at + 1, end);
      at = end;
    } else if (char === '\\' && at + 1 < command.length) {
      word = (word ?? '') + command[++at];
    } else if (char === '>') {
      endWordUnlessFd();
      if (command[at + 1] === '>' || command[at + 1] === '|') at++;
      if (command[at + 1] === '&') at++;
      redirecting = true;
    } else if (char === '|' || char === ';' || char === '&' || char === '\n') {
      const double = command[at + 1] === char;
      if (char === '&' && command[at + 1] === '>') continue;
      endCommand(at, char === '|' && !double);
      if (double) at++;
      start = at + 1;
    } else if (char === ' ' || char === '\t') {
      endWord();
    } else {
      word = (word ?? '') + char;
    }
  }
  endCommand(command.length, false);
  return result;

  /** `2>` and `&>` name a descriptor, not a word. */
  function endWordUnlessFd() {
    if (word !== null && /^\d*$/.test(word)) word = null;
    else endWord();
  }
}

/** A redirection target outside the workspace: absolute (but not /dev/null and the like), in a home folder, or climbing out with `..`. */
function leavesWorkspace(target: string): boolean {
  if (target.startsWith('&')) return false;
  if (target.startsWith('/')) return !SAFE_TARGETS.has(target);
  return target.startsWith('~') || target.startsWith('$HOME') || target.startsWith('${HOME}') || target.split('/').includes('..');
}

function basename(word: string): string {
  return word.slice(word.lastIndexOf('/') + 1);
}

function judge(command: string, depth: number): CommandHazard[] {
  const hazards: CommandHazard[] = [];
  for (const simple of simpleCommands(command)) {
    const words = simple.words.filter((word, index) => index > 0 || !/^\w+=/.test(word));
    let at = 0;
    while (at < words.length && (PREFIXES.has(basename(words[at] as string)) || /^\w+=/.test(words[at] as string))) {
      if (['sudo', 'doas'].includes(basename(words[at] as string))) hazards.push({ kind: 'sudo', text: simple.text });
      at++;
    }
    const name = basename(words[at] ?? '');
    const rest = words.slice(at + 1);
    if (DELETERS.has(name) || (name === 'find' && (rest.includes('-delete') || rest.some((word, index) => word === '-exec' && DELETERS.has(basename(rest[index + 1] ?? ''))))) || (name === 'git' && rest[0] === 'clean')) {
      hazards.push({ kind: 'deletion', text: simple.text });
    }
    if (simple.piped && SHELLS.has(name)) hazards.push({ kind: 'pipe_to_shell', text: simple.text });
    if (SHELLS.has(name) && depth < MAX_DEPTH) {
      const script = rest[rest.indexOf('-c') + 1];
      if (rest.includes('-c') && script) hazards.push(...judge(script, depth + 1));
    }
    for (const target of simple.redirects.filter(leavesWorkspace)) hazards.push({ kind: 'outside_redirect', text: `> ${target}` });
  }
  return hazards;
}

/** The dangerous parts of `command`, in the order they appear. */
export function commandHazards(command: string): CommandHazard[] {
  return judge(command, 0);
}

/** What each kind of hazard means, as the approval dialog says it. */
export const HAZARD_MEANING: Record<CommandHazard['kind'], string> = {
  deletion: 'deletes files',
  outside_redirect: 'writes outside the workspace',
  pipe_to_shell: 'pipes text into a shell, which runs it',
  sudo: 'asks for administrator rights',
};
