import { describe, expect, it } from 'vitest';
import { SecretRedactor } from '../../../src/core/secrets/redactor';

describe('SecretRedactor', () => {
  it('blanks out every occurrence of every known secret, the longer one whole', () => {
    const redactor = new SecretRedactor();
    redactor.add('SECRETKEY123');
    redactor.add('SECRETKEY123-EXTENDED');
    expect(redactor.redact('a SECRETKEY123 b SECRETKEY123-EXTENDED c\0SECRETKEY123\0')).toBe('a [redacted] b [redacted] c\0[redacted]\0');
  });

  it('walks JSON-like values, keys included, and leaves the original untouched', () => {
    const redactor = new SecretRedactor();
    redactor.add('sk-live-abcdef');
    const value = { content: 'key=sk-live-abcdef', metadata: { list: ['sk-live-abcdef', 3, null], 'sk-live-abcdef': true } };
    expect(redactor.redactValue(value)).toEqual({ content: 'key=[redacted]', metadata: { list: ['[redacted]', 3, null], '[redacted]': true } });
    expect(value.content).toBe('key=sk-live-abcdef');
  });

  it('ignores empty and short strings, which are ordinary text too often', () => {
    const redactor = new SecretRedactor();
    redactor.add(undefined);
    redactor.add('');
    redactor.add('abc');
    expect(redactor.redact('abc abc')).toBe('abc abc');
  });
});
