import { describe, expect, it } from 'vitest';
import { extractFirstJsonObject, parseLenientJson } from '../../../src/core/model/lenient-json';

describe('lenient JSON', () => {
  it('finds the first balanced object in prose, ignoring braces inside strings', () => {
    expect(extractFirstJsonObject('Action: {"tool": "x", "arguments": {"a": "}"}} trailing {"no": 1}')).toBe('{"tool": "x", "arguments": {"a": "}"}}');
    expect(extractFirstJsonObject('no json here')).toBeNull();
  });

  it.each([
    ['{"a": 1,}', { a: 1 }],
    ['{"a": [1, 2,],}', { a: [1, 2] }],
    ["{'a': 'b'}", { a: 'b' }],
    ['{a: 1, b_c: "x"}', { a: 1, b_c: 'x' }],
    ['{\u201ca\u201d: \u201cb\u201d}', { a: 'b' }],
    ['```json\n{"a": 1}\n```', { a: 1 }],
    ['{"a": {"b": 1}', { a: { b: 1 } }],
    ['{"text": "it\'s fine",}', { text: "it's fine" }],
    ["{'flag': True, 'none': None}", { flag: true, none: null }],
  ])('repairs %j', (text, value) => {
    expect(parseLenientJson(text)).toEqual({ ok: true, value });
  });

  it('says why when it cannot', () => {
    const result = parseLenientJson('{"a" 1 2 }}}');
    expect(result.ok).toBe(false);
  });
});
