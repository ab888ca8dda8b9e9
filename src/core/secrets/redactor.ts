export const REDACTED = '[redacted]';

/** Shorter strings are ordinary text too often to be blanked out everywhere they occur. */
export const MIN_SECRET_LENGTH = 8;

/**
 * The secrets this process knows (API keys), and the one place they are blanked out of whatever is
 * about to be stored or announced: tool output, events, the step trace, and so the audit log.
 */
export class SecretRedactor {
  private secrets: string[] = [];

  add(secret: string | undefined): void {
    if (!secret || secret.length < MIN_SECRET_LENGTH || this.secrets.includes(secret)) return;
    // Longest first, so a secret that contains another is blanked out whole.
    this.secrets = [...this.secrets, secret].sort((a, b) => b.length - a.length);
  }

  redact(text: string): string {
    let clean = text;
    for (const secret of this.secrets) clean = clean.replaceAll(secret, REDACTED);
    return clean;
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
