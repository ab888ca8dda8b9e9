/*
 * Secrets a run read (a `.env` a tool printed, a token in a config file, a passport or card number in a
 * profile): kept as strings so a call
 * that would carry one out is caught however it is spelled — as is, reversed, base64, hex or
 * percent-encoded. Archon's own keys never reach a tool (the redactor); these are the workspace's.
 */

/** A value shorter than this is too common to track. */
const MIN_SECRET_CHARS = 8;
/** Lines longer than this are not read for names (a minified file is no credentials file). */
const MAX_LINE_CHARS = 2000;
/** A value under a name that says it is a credential or personal data: `API_KEY=…`, `"password": "…"`, `'Passport Number': '…'`. */
const NAMED = /(?:^|[\s{,("'])(?:export\s+)?["']?([A-Za-z0-9_. -]{0,40})["']?\s*[=:]\s*["']?([^\s"',;}]{8,200})/g;
/** The words of a name that make its value a secret, as whole words of it ("api_key", "Passport Number"; not "monkey", not "author"). */
const SECRET_NAME = /(^|[_. -])(api[_ -]?key|key|token|secret|passw(or)?d|pwd|credentials?|auth[_ -]?token|private[_ -]?key|passport([_ -]?(number|no))?|card([_ -]?(number|no))?|ssn|social[_ -]security([_ -]number)?|id[_ -]number|account[_ -]number)($|[_. -])/i;
const CREDENTIAL = /\b(?:sk-[A-Za-z0-9_-]{16,100}|ghp_[A-Za-z0-9]{20,100}|gh[ousr]_[A-Za-z0-9]{20,100}|xox[abposr]-[A-Za-z0-9-]{10,100}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,100})\b/g;
/** A run of letters and digits long enough to be a random key; taken only when it mixes cases and digits and stands alone. */
const LONG_RUN = /(?<![A-Za-z0-9_+/=-])[A-Za-z0-9_-]{32,200}(?![A-Za-z0-9_+/=-])/g;

/** A value that is code, not a secret: an identifier, a property path, a call, an environment lookup. */
function looksLikeCode(value: string): boolean {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(value) && !/\d/.test(value) || /[().$]|^process|^env\b|^\$\{/.test(value) || /^(true|false|null|none|undefined)$/i.test(value);
}

function randomLooking(value: string): boolean {
  return /\d/.test(value) && /[a-z]/.test(value) && /[A-Z]/.test(value) && !/^[A-Za-z][a-z]+(?:[A-Z][a-z]+)+\d*$/.test(value);
}

/** The secret-looking values in a text: values under names that say key, token, password, passport…, and credential-shaped tokens. */
export function secretsIn(text: string): string[] {
  const found = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.length > MAX_LINE_CHARS) continue;
    for (const match of line.matchAll(NAMED)) {
      const value = match[2] ?? '';
      if (SECRET_NAME.test((match[1] ?? '').trim()) && value.length >= MIN_SECRET_CHARS && !looksLikeCode(value)) found.add(value);
    }
  }
  for (const match of text.matchAll(CREDENTIAL)) found.add(match[0]);
  for (const match of text.matchAll(LONG_RUN)) if (randomLooking(match[0])) found.add(match[0]);
  return [...found];
}

const urlSafe = (base64: string) => base64.replace(/\+/g, '-').replace(/\//g, '_');

/**
 * The value base64-encoded alone, and the stable core of it inside a longer text's base64 at each of
 * the three byte offsets it can land on (the first and last group depend on its neighbours).
 */
function base64Forms(value: string): string[] {
  const alone = Buffer.from(value, 'utf8').toString('base64').replace(/=+$/, '');
  const cores = [0, 1, 2].map((pad) => {
    const encoded = Buffer.from(`${'\0'.repeat(pad)}${value}`, 'utf8').toString('base64');
    return encoded.slice(pad === 0 ? 0 : 4, -4);
  });
  return [alone, ...cores.filter((core) => core.length >= MIN_SECRET_CHARS)].flatMap((form) => [form, urlSafe(form)]);
}

/** Every spelling of a secret a call might carry it in. */
function spellingsOf(secret: string): string[] {
  const reversed = [...secret].reverse().join('');
  const hex = Buffer.from(secret, 'utf8').toString('hex');
  return [secret, reversed, hex, encodeURIComponent(secret), ...base64Forms(secret)].filter((form, index, all) => all.indexOf(form) === index);
}

/** The secrets among `secrets` that `text` carries, in any spelling, whatever its case. */
export function secretsCarried(text: string, secrets: readonly string[]): string[] {
  const lower = text.toLowerCase();
  return secrets.filter((secret) => spellingsOf(secret).some((form) => text.includes(form) || lower.includes(form.toLowerCase())));
}
