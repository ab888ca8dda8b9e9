export const REDACTED = '[redacted]';

/** Shorter strings are ordinary text too often to be blanked out everywhere they occur. */
export const MIN_SECRET_LENGTH = 8;

/**
 * The base64 characters that depend on `secret`'s bytes alone when it starts `offset` bytes into
 * an encoded text (0, 1 or 2): what a secret looks like inside any base64, whatever precedes it.
 */
function base64Core(secret: Buffer, offset: number): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), secret]).toString('base64');
  const first = Math.ceil((offset * 8) / 6);
  const end = Math.floor(((offset + secret.length) * 8) / 6);
  return encoded.slice(first, end);
}

/** A secret as it may reach a model through a tool that encodes it: itself, reversed, hex, base64 (standard and URL-safe, at each alignment). */
function encodedForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const hex = bytes.toString('hex');
  const base64 = [0, 1, 2].map((offset) => base64Core(bytes, offset));
  const urlSafe = base64.map((core) => core.replaceAll('+', '-').replaceAll('/', '_'));
  const forms = [secret, [...secret].reverse().join(''), hex, hex.toUpperCase(), ...base64, ...urlSafe];
  return forms.filter((form) => form.length >= MIN_SECRET_LENGTH);
}

/**
 * The secrets this process knows (API keys), and the one place they are blanked out of whatever is
 * about to be stored or announced: tool output, events, the step trace, and so the audit log. Each
 * is blanked in its encoded forms too (see `encodedForms`).
 */
export class SecretRedactor {
  private secrets: string[] = [];
  private forms: string[] = [];

  add(secret: string | undefined): void {
    if (!secret || secret.length < MIN_SECRET_LENGTH || this.secrets.includes(secret)) return;
    this.secrets = [...this.secrets, secret];
    // Longest first, so a secret that contains another is blanked out whole.
    this.forms = [...new Set([...this.forms, ...encodedForms(secret)])].sort((a, b) => b.length - a.length);
  }

  redact(text: string): string {
    let clean = text;
    for (const form of this.forms) clean = clean.replaceAll(form, REDACTED);
    return clean;
  }

  holdsSecret(text: string): boolean {
    return this.redact(text) !== text;
  }

  /** Every string inside a JSON-like value, keys included; the value itself is not changed. */
  redactValue<T>(value: T): T {
    if (this.secrets.length === 0) return value;
    return this.walk(value) as T;
  }

  private walk(value: unknown): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (Array.isArray(value)) return value.map((item) => this.walk(item));
    if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [this.redact(key), this.walk(item)]));
    }
    return value;
  }
}
