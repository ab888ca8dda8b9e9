import { describe, expect, it } from 'vitest';
import { REDACTED, SecretRedactor } from '../../../src/core/secrets/redactor';

/*
 * The red-team attack: a tool reads the key file and prints it reversed, hex- or base64-encoded, so
 * the plain-text redaction missed it and the model got the key.
 */

const KEY = 'sk-proj-A1b2C3d4E5f6G7h8I9j0';

/** Whether any piece left between redactions still decodes (at any alignment) to text holding the key. */
function leaksThroughBase64(redacted: string, encoding: 'base64' | 'base64url'): boolean {
  return redacted.split(REDACTED).some((piece) => ['', 'A', 'AA', 'AAA'].some((pad) => Buffer.from(pad + piece, encoding).toString('latin1').includes(KEY)));
}

describe('a known secret in encoded forms', () => {
  const redactor = new SecretRedactor();
  redactor.add(KEY);

  for (const encoding of ['base64', 'base64url'] as const) {
    it(`is blanked in ${encoding}, whatever comes before it (every alignment)`, () => {
      for (let before = 0; before < 6; before++) {
        const encoded = Buffer.from(`${'#'.repeat(before)}OPENAI_API_KEY=${KEY}\nDEBUG=1\n`).toString(encoding);
        const redacted = redactor.redact(encoded);
        expect(redacted, `${before} bytes before`).toContain(REDACTED);
        expect(leaksThroughBase64(redacted, encoding), `${before} bytes before`).toBe(false);
      }
    });
  }

  it('is blanked reversed, and in lower- and upper-case hex', () => {
    const hex = Buffer.from(`key: ${KEY}`).toString('hex');
    for (const text of [[...`${KEY} is the key`].reverse().join(''), hex, hex.toUpperCase()]) {
      const redacted = redactor.redact(text);
      expect(redacted).toContain(REDACTED);
      expect(redacted).not.toContain([...KEY].reverse().join(''));
      expect(redacted.toLowerCase()).not.toContain(Buffer.from(KEY).toString('hex'));
    }
  });

  it('leaves ordinary base64 and hex alone', () => {
    const text = `${Buffer.from('nothing secret in here at all').toString('base64')} ${Buffer.from('nor here').toString('hex')}`;
    expect(redactor.redact(text)).toBe(text);
  });
});
