import type { CommandHazard } from '../../shared/schemas/approval';

/*
 * What a call reaches: the files it writes in the workspace, the places it sends to outside (a URL's
 * host, an address, a recipient, a channel), and the names it passes on. A call a step makes after
 * reading untrusted text stays within the operator's authority only when what it reaches is what the
 * operator's own words name.
 */

/** One string a call passes: a file it writes, a place it sends to, or another name. */
export interface Reach {
  key: string;
  value: string;
  kind: 'write' | 'send' | 'name';
}

const DESTINATION_KEY = /(^to$|recipient|receiver|email|address|url|uri|link|host|domain|iban|account|dest|target|channel|user|phone|password|webhook|endpoint|repo|bucket)/i;
/** Arguments that carry a body of text rather than a name: read for the places they send people to, and for secrets. */
const BULK_KEY = /^(content|contents|body|text|message|description|note|notes|comment|summary|data|markdown|html)$/i;
/** A name longer than this is a body, whatever its key: only the places in it count. */
const MAX_NAME_CHARS = 300;
const URL = /\bhttps?:\/\/[^\s"'`<>)]{1,2000}/gi;
const HOST = /\b(?:(?:\d{1,3}\.){3}\d{1,3}|(?:[a-z0-9-]{1,63}\.){1,8}(?:com|net|org|io|dev|app|co|info|biz|xyz|top|ru|cn|uk|de|fr|local))(?::\d{1,5})?\b/gi;
const EMAIL = /\b[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}\b/g;
const IBAN = /\b[A-Z]{2}\d{2}[A-Z0-9]{10,30}\b/g;
/** A file a shell command writes: a redirection's target, or the last word of cp, mv, tee, install, dd of=. */
const SHELL_WRITE = /(?:>>?|&>>?|>\|)\s*([^\s;&|<>]{1,500})|\b(?:cp|mv|install)\s+(?:-\S+\s+)*(?:\S+\s+)+([^\s;&|<>]{1,500})|\btee\s+(?:-\S+\s+)*([^\s;&|<>]{1,500})|\bof=([^\s;&|<>]{1,500})/g;

/** Files that run code or configure what runs it: a write to one can make a later, named command do anything. */
const RUNS_CODE_PATH = /(^|\/)(package\.json|makefile|gnumakefile|justfile|dockerfile|setup\.py|setup\.cfg|pyproject\.toml|conftest\.py|cargo\.toml|build\.rs|build\.gradle|pom\.xml|\.npmrc|\.bashrc|\.profile|\.envrc)$|(^|\/)\.(git|github|husky|vscode)\/|\.(sh|bash|zsh|ps1|bat|cmd)$/i;

export function runsCode(path: string): boolean {
  return RUNS_CODE_PATH.test(path.replace(/\\/g, '/').replace(/^\.\//, ''));
}

function placesIn(value: string): string[] {
  return [URL, HOST, EMAIL].flatMap((pattern) => [...value.matchAll(pattern)].map((match) => match[0]));
}

function looksLikePlace(value: string): boolean {
  return [new RegExp(`^${URL.source}$`, 'i'), new RegExp(`^${HOST.source}$`, 'i'), new RegExp(`^${EMAIL.source}$`), new RegExp(`^${IBAN.source}$`)].some((pattern) => pattern.test(value));
}

function stringsOf(value: unknown, key: string, found: Reach[]): void {
  if (typeof value === 'string' || typeof value === 'number') {
    const text = String(value);
    if (BULK_KEY.test(key) || text.length > MAX_NAME_CHARS) {
      for (const place of placesIn(text)) found.push({ key, value: place, kind: 'send' });
      return;
    }
    found.push({ key, value: text, kind: DESTINATION_KEY.test(key) || looksLikePlace(text) ? 'send' : 'name' });
  } else if (Array.isArray(value)) value.forEach((item) => stringsOf(item, key, found));
  else if (typeof value === 'object' && value !== null) for (const [inner, item] of Object.entries(value)) stringsOf(item, inner, found);
}

/** The files a shell command writes and the places it sends to. */
function commandReach(command: string): Reach[] {
  const reach: Reach[] = [];
  for (const match of command.matchAll(SHELL_WRITE)) {
    const target = match[1] ?? match[2] ?? match[3] ?? match[4];
    if (target && !/^\/dev\/(null|stdout|stderr)$/.test(target)) reach.push({ key: 'command', value: target.replace(/^["']|["']$/g, ''), kind: 'write' });
  }
  for (const place of placesIn(command)) reach.push({ key: 'command', value: place, kind: 'send' });
  return reach;
}

/** Everything a call reaches, by tool: a write's path, a fetch's URL, a command's targets and hosts, every name another tool is passed. */
export function callReach(tool: string, args: unknown): Reach[] {
  const given = (args ?? {}) as Record<string, unknown>;
  if (tool === 'write_file') return [{ key: 'path', value: String(given.path ?? ''), kind: 'write' }];
  if (tool === 'http_get') return [{ key: 'url', value: String(given.url ?? ''), kind: 'send' }];
  if (tool === 'run_command') return commandReach(String(given.command ?? ''));
  const found: Reach[] = [];
  stringsOf(args, '', found);
  return found.filter((reach) => reach.value.trim() !== '');
}

/** The places a read-only call reaches: the links and hosts it is passed (a page fetched can carry data out in its address). */
export function readReach(args: unknown): Reach[] {
  const found: Reach[] = [];
  stringsOf(args, '', found);
  return found.filter((reach) => reach.kind === 'send' && looksLikePlace(reach.value));
}

/** The hazards of a command that reach beyond the workspace, destroy, or run code it was handed. */
export const STEERABLE_HAZARDS: ReadonlySet<CommandHazard['kind']> = new Set(['network', 'pipe_to_shell', 'runs_code', 'sudo', 'outside_redirect', 'unreadable', 'deletion']);

/**
 * Programs a step may run after reading untrusted text without the operator naming the command: they
 * read, build or test, and run nothing a file they are handed asks for beyond what the project defines.
 */
const QUIET_PROGRAMS: ReadonlySet<string> = new Set(['ls', 'cat', 'head', 'tail', 'wc', 'grep', 'rg', 'sort', 'uniq', 'diff', 'echo', 'pwd', 'true', 'test', 'stat', 'file', 'tree', 'du', 'git', 'npm', 'yarn', 'pnpm', 'make', 'cargo', 'go', 'pytest', 'tsc', 'eslint', 'jq']);
/** Subcommands of those that change what is outside the workspace, or fetch and run what they are told. */
const LOUD_SUBCOMMANDS = /^(git\s+(push|remote|fetch|pull|clone|config|submodule|credential)|npm\s+(publish|install|i|exec|x|login|adduser|config)|yarn\s+(publish|add|dlx|npm)|pnpm\s+(publish|add|dlx|exec)|cargo\s+(publish|install|login)|go\s+(get|install))\b/;

/** The program a command line runs first, and whether it is one of the quiet ones used quietly. */
export function quietCommand(command: string): boolean {
  const parts = command.split(/&&|\|\||;|\|/).map((part) => part.trim().replace(/^(\w+=\S*\s+)+/, ''));
  return parts.every((part) => QUIET_PROGRAMS.has(part.split(/\s+/)[0] ?? '') && !LOUD_SUBCOMMANDS.test(part));
}

function hostOf(value: string): string | null {
  try {
    return new globalThis.URL(/^https?:\/\//i.test(value) ? value : `http://${value}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether `value` stands in `text` as a whole token, not inside a longer word or address. */
export function holdsToken(text: string, value: string): boolean {
  const wanted = value.trim();
  if (wanted === '') return false;
  return new RegExp(`(?<![\\w.@/-])${escaped(wanted)}(?![\\w@-]|\\.\\w)`, 'i').test(text);
}

/** Whether the operator's own words name this value: itself as a whole token, a host (or a domain it belongs to), or a path's file name. */
export function namedBy(words: string, value: string): boolean {
  const wanted = value.toLowerCase().trim();
  if (wanted === '' || holdsToken(words, wanted)) return true;
  // An address is named only as itself: a colleague's domain names no stranger at it.
  if (new RegExp(`^${EMAIL.source}$`).test(wanted)) return false;
  if (/^https?:\/\//.test(wanted) || looksLikePlace(wanted)) {
    const host = hostOf(wanted);
    if (host === null) return false;
    const named = placesIn(words).map((place) => hostOf(place)).filter((name): name is string => name !== null);
    return named.some((name) => host === name || host.endsWith(`.${name}`));
  }
  const file = wanted.replace(/\\/g, '/').split('/').at(-1) ?? wanted;
  return /\.[a-z0-9]{1,8}$/.test(file) && holdsToken(words, file);
}
