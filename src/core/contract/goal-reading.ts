import { posix } from 'node:path';
import type { AnswerFormat } from '../../shared/schemas/goal-contract';

/*
 * What plain words say about files, commands and forms: the goal's instructions ("write NOTES.md",
 * "make sure `npm test` passes") and a step's claims ("I wrote NOTES.md"). Deliberately narrow: a path
 * counts only with a verb or preposition that makes it a write, so a criterion read here is one the
 * words really state; what it misses is left to the critic.
 */

const WRITE_VERBS = new Set(
  'write writes writing wrote written create creates creating created save saves saving saved generate generates generating generated produce produces producing produced make makes making made update updates updating updated add adds adding added append appends appending appended edit edits editing edited modify modifies modifying modified change changes changing changed fix fixes fixing fixed rename renames renaming renamed output outputs outputting put puts putting store stores storing stored record records recording recorded touch touches touched overwrite overwrites overwrote overwritten replace replaces replacing replaced copy copies copying copied move moves moving moved export exports exporting exported dump dumps dumped emit emits emitted draft drafts drafted'.split(' '),
);
/** Verbs after which "to X" / "into X" is where the work is written. */
const TRANSFORM_VERBS = new Set('summarize summarise summarizes summarises summarized summarised convert converts converted translate translates translated extract extracts extracted render renders rendered format formats formatted collect collects collected compile compiles compiled list lists listed count counts counted'.split(' '));
const READ_VERBS = new Set(
  'read reads reading open opens opened look looks looked summarize summarise summarizes summarises summarizing summarising summarized summarised analyze analyse analyzes analyses analyzed analysed count counts counting counted check checks checking checked list lists listing listed compare compares compared review reviews reviewed inspect inspects inspected parse parses parsed load loads loaded search searches searched grep find finds found scan scans scanned use uses used see consult consults consulted examine examines examined study explain explains describe describes delete deletes deleted remove removes removed'.split(' '),
);
const READ_PREPOSITIONS = new Set(['from', 'in', 'of', 'inside', 'within', 'at', 'on', 'using', 'about', 'against', 'than', 'by', 'under', 'for']);
const WRITE_PREPOSITIONS = new Set(['to', 'into', 'as', 'named', 'called']);
/** Verbs whose object is a source: "copy a.txt to b.txt" writes b.txt, not a.txt. */
const SOURCE_VERBS = new Set('copy copies copying copied move moves moving moved rename renames renaming renamed'.split(' '));
const NEGATION = /^(not|never|without|no|none|nothing|neither|nor)$|n't$/;
const PASSIVE_WRITE = /^\s*(?:\S+\s+){0,2}?(?:has been|have been|was|were|is now|is)\s+(written|created|saved|generated|updated|added|modified|edited|changed|produced|stored)\b/i;
/** Dotted words that are names, not files. */
const NOT_PATHS = /^(node|vue|next|nuxt|react|express|three|chart|d3|socket\.io|e\.g|i\.e|etc|vs|a\.m|p\.m)(\.js)?\.?$/i;

const PATH = /`([^`\n]+)`|((?:\.{0,2}\/)?[\w@+-]+(?:[\\/][\w.@+-]+)*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/@-]|\.[A-Za-z0-9])/g;

interface Mention {
  path: string;
  /** The sentence's words before the path, lower-case, nearest last. */
  before: string[];
  after: string;
}

function sentences(text: string): string[] {
  return text.split(/(?<=[.!?])\s+(?=[A-Z`"'(])|;\s*|\n+/);
}

/** An e-mail address or a web host, not a file ("john.doe@corp.com", "www.example.org", "example.com"); `src/@types/x.d.ts` is a file. */
const ADDRESS = /^[^/\\]+@[^/\\]+\.[a-z]+$|^www\.|^[^/\\]+\.(com|org|net)$/i;

/** A file name: an extension, no URL; spaces only where the text quoted it in backticks. */
function looksLikePath(token: string, quoted: boolean): boolean {
  if (token.includes('://') || (!quoted && (token.includes(' ') || ADDRESS.test(token))) || NOT_PATHS.test(token)) return false;
  return /\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(token) && !/^\d/.test(token.split(/[\\/]/).at(-1) ?? '');
}

function words(text: string): string[] {
  return text.toLowerCase().split(/[^a-z']+/).filter(Boolean);
}

function mentions(text: string): Mention[] {
  const found: Mention[] = [];
  for (const sentence of sentences(text)) {
    for (const match of sentence.matchAll(PATH)) {
      const quoted = match[1] !== undefined;
      const raw = (match[1] ?? match[2] ?? '').trim().replace(/[.,:]+$/, '');
      const path = looksLikePath(raw, quoted) ? workspacePath(raw) : null;
      if (path === null) continue;
      found.push({ path, before: words(sentence.slice(0, match.index)), after: sentence.slice(match.index + match[0].length) });
    }
  }
  return found;
}

/** A path inside the workspace as the workspace names it (forward slashes, normalised); null for one outside it or absolute. */
export function workspacePath(path: string): string | null {
  const forward = path.replace(/\\/g, '/');
  if (forward.startsWith('/') || /^[A-Za-z]:\//.test(forward)) return null;
  const normal = posix.normalize(forward);
  return normal === '..' || normal.startsWith('../') || normal === '.' ? null : normal;
}

/** Words after which a verb's form is a noun ("the local copy", "its output"). */
const DETERMINERS = new Set('the a an this that these those its their his her my our your local new old latest last first same whole'.split(' '));

/** Whether the word at `index` is a verb: not a noun after a determiner ("the copy"), not the "make" of "make sure". */
function isVerbAt(said: readonly string[], index: number): boolean {
  const word = said[index] ?? '';
  if (!WRITE_VERBS.has(word) && !READ_VERBS.has(word)) return false;
  if (DETERMINERS.has(said[index - 1] ?? '')) return false;
  return !(/^mak/.test(word) && /^(sure|certain)$/.test(said[index + 1] ?? ''));
}

function nearestVerb(said: readonly string[]): { verb: string; index: number } | null {
  for (let index = said.length - 1; index >= 0; index--) if (isVerbAt(said, index)) return { verb: said[index] ?? '', index };
  return null;
}

function passiveWrite(after: string): boolean {
  const passive = PASSIVE_WRITE.exec(after);
  return passive !== null && !words(passive[0]).some((word) => NEGATION.test(word));
}

function isWritten({ before, after }: Mention): boolean {
  if (before.slice(-2).some((word) => READ_PREPOSITIONS.has(word))) return false;
  const verb = nearestVerb(before);
  if ((verb ? before.slice(Math.max(0, verb.index - 3)) : before.slice(-4)).some((word) => NEGATION.test(word))) return false;
  const target = before.slice(-3).some((word) => WRITE_PREPOSITIONS.has(word));
  if (target && before.some((word, index) => isVerbAt(before, index) && (WRITE_VERBS.has(word) || TRANSFORM_VERBS.has(word)))) return true;
  if (verb) return WRITE_VERBS.has(verb.verb) && !SOURCE_VERBS.has(verb.verb);
  return passiveWrite(after);
}

/** The files the text says are (to be) written, in order, each once. */
export function writtenFiles(text: string): string[] {
  return [...new Set(mentions(text).filter(isWritten).map((mention) => mention.path))];
}

/** Every path-like name the text mentions. */
export function mentionedFiles(text: string): string[] {
  return [...new Set(mentions(text).map((mention) => mention.path))];
}

const COMMAND = /`([^`\n]{2,200})`/g;
/** A claim, in the past, that a command ran ("I ran `npm test`", "executed `make`"). */
const RAN_BEFORE = /\b(ran|executed|invoked|(?:have|has|had) (?:now )?(?:run|executed))\b[^`.]{0,20}$/i;
const PASSED_AFTER = /^[^`.]{0,25}\b(passed|succeeded|exited (?:with )?(?:code )?0|was green|were green|worked)\b/i;
/** A requirement that a command pass ("make sure `npm test` passes"); "whether `X` passes" asks, it requires nothing. */
const MUST_PASS_AFTER = /^[^`.]{0,25}\b(pass|passes|succeed|succeeds|exits? (?:with )?(?:code )?0|is green|are green)\b/i;
const ASKS_BEFORE = /\b(whether|if|when|until|unless)\b[^`.]{0,15}$/i;

/** A command as a text mentions it, with what comes before and after it in its sentence. */
function commandMentions(text: string): { command: string; before: string; after: string }[] {
  return sentences(text).flatMap((sentence) =>
    [...sentence.matchAll(COMMAND)].flatMap((match) => {
      const command = (match[1] ?? '').trim();
      if (looksLikePath(command, true) || !/\s|^[\w.-]+$/.test(command)) return [];
      return [{ command, before: sentence.slice(0, match.index), after: sentence.slice(match.index + match[0].length) }];
    }),
  );
}

/** Commands (in backticks) a goal says must pass. */
export function commandsToPass(text: string): string[] {
  return [...new Set(commandMentions(text).filter((mention) => MUST_PASS_AFTER.test(mention.after) && !ASKS_BEFORE.test(mention.before)).map((mention) => mention.command))];
}

/** What a result claims of a command: that it ran, or that it passed. */
export interface CommandClaim {
  command: string;
  passed: boolean;
}

/** Commands (in backticks) a result says, in the past, ran or passed; advice ("you can run `X`") and denials claim nothing. */
export function commandClaims(text: string): CommandClaim[] {
  const claims = new Map<string, boolean>();
  for (const { command, before, after } of commandMentions(text)) {
    if (words(before).some((word) => NEGATION.test(word))) continue;
    const passed = PASSED_AFTER.test(after) && !words(after.slice(0, 25)).some((word) => NEGATION.test(word));
    if (passed || RAN_BEFORE.test(before)) claims.set(command, (claims.get(command) ?? false) || passed);
  }
  return [...claims].map(([command, passed]) => ({ command, passed }));
}

const NUMBER_ANSWER = [
  /\b(answer|reply|respond|return|output|give)\b[^.?!\n]{0,30}\b(with|as)\b[^.?!\n]{0,12}\b(a|one|single|only|just)\b[^.?!\n]{0,10}\b(number|integer)\b(?! of)/i,
  /\b(number|integer) only\b/i,
  /\bonly (the|a) (number|integer)\b/i,
  /\bjust (the|a) (number|integer)\b/i,
];
const JSON_ANSWER = [/\b(answer|reply|respond|return|output|give)\b[^.?!\n]{0,40}\b(as|in)\b[^.?!\n]{0,10}\bjson\b/i, /\b(a|as a|one) json (object|array)\b/i];

/** The form the goal asks its answer in, when it says so plainly. */
export function answerFormat(text: string): AnswerFormat | null {
  if (NUMBER_ANSWER.some((pattern) => pattern.test(text))) return 'number';
  if (JSON_ANSWER.some((pattern) => pattern.test(text))) return 'json';
  return null;
}

const CONSTRAINT = /\b(do not|don't|never|must not|mustn't|without|avoid|only use|leave\b.*\bunchanged|keep\b.*\bunchanged)\b/i;

/** The goal's clauses that restrict how it is done. */
export function constraintsIn(text: string): string[] {
  return sentences(text)
    .flatMap((sentence) => sentence.split(/,\s*(?:and|but)\s+|\s+but\s+/))
    .map((clause) => clause.trim().replace(/[.;]+$/, ''))
    .filter((clause) => clause !== '' && CONSTRAINT.test(clause))
    .slice(0, 20);
}
