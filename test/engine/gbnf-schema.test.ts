import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toGbnfJsonSchema, withoutNullOptionals } from '../../src/engine/gbnf-schema';
import { TOOL_CATALOGUE } from '../../src/shared/tools/catalogue';

describe('JSON Schema → node-llama-cpp GbnfJsonSchema', () => {
  it('keeps what a grammar can say: types, properties, enums, consts, array and string bounds', () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 20, description: 'who' },
        kind: { enum: ['a', 'b'] },
        fixed: { const: 3 },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 4 },
      },
      required: ['name'],
      additionalProperties: false,
    };
    // Optional properties may be null: the grammar writes every key, and the null means "left out".
    expect(toGbnfJsonSchema(schema)).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 20, description: 'who' },
        kind: { oneOf: [{ enum: ['a', 'b'] }, { type: 'null' }] },
        fixed: { oneOf: [{ const: 3 }, { type: 'null' }] },
        tags: { oneOf: [{ type: 'array', items: { type: 'string' }, maxItems: 4 }, { type: 'null' }] },
      },
    });
  });

  it("takes an optional property the grammar made null out of the answer, at any depth; a required one's null stays", () => {
    const schema = {
      type: 'object',
      properties: { goal: { type: 'string' }, note: { type: 'string' }, steps: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, tool: { type: 'string' }, args: { type: ['object', 'null'] } }, required: ['id', 'args'] } } },
      required: ['goal', 'steps'],
    };
    const written = { goal: 'g', note: null, steps: [{ id: 'a', tool: null, args: null }, { id: 'b', tool: 'calculator', args: { expression: '6*7' } }] };
    expect(withoutNullOptionals(written, schema)).toEqual({ goal: 'g', steps: [{ id: 'a', args: null }, { id: 'b', tool: 'calculator', args: { expression: '6*7' } }] });
  });

  it('a number past what JSON holds (the grammar bounds none): left out when optional, held at the largest safe integer when required', () => {
    const schema = { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' }, page: { type: 'integer' } }, required: ['query', 'page'] };
    const written = JSON.parse('{"query": "q", "limit": 929e703470347038234, "page": -1e999}') as unknown;
    expect(withoutNullOptionals(written, schema)).toEqual({ query: 'q', page: -Number.MAX_SAFE_INTEGER });
  });

  it('an integer past the safe ones (5e20 parses, but no integer check takes it): left out when optional, held when required; a number is kept', () => {
    const schema = { type: 'object', properties: { limit: { type: 'integer' }, page: { type: ['integer', 'null'] }, score: { type: 'number' }, items: { type: 'array', items: { type: 'integer' } } }, required: ['page', 'score', 'items'] };
    const written = JSON.parse('{"limit": 5e20, "page": -84736291038475629384, "score": 5e20, "items": [3, 9007199254740993]}') as unknown;
    expect(withoutNullOptionals(written, schema)).toEqual({ page: -Number.MAX_SAFE_INTEGER, score: 5e20, items: [3, Number.MAX_SAFE_INTEGER] });
  });

  it('drops what it cannot say instead of failing: numeric bounds, patterns, unknown formats, not', () => {
    expect(toGbnfJsonSchema({ type: 'integer', minimum: 1, maximum: 9 })).toEqual({ type: 'integer' });
    expect(toGbnfJsonSchema({ type: 'string', pattern: '^a+$', format: 'email' })).toEqual({ type: 'string' });
    expect(toGbnfJsonSchema({ type: 'string', format: 'date-time' })).toEqual({ type: 'string', format: 'date-time' });
    expect(toGbnfJsonSchema({ not: { type: 'null' } })).toMatchObject({ oneOf: expect.any(Array) });
  });

  it('turns anyOf and type lists into oneOf, and keeps $defs (or definitions) for $ref', () => {
    expect(toGbnfJsonSchema({ anyOf: [{ type: 'string' }, { type: 'null' }] })).toEqual({ oneOf: [{ type: 'string' }, { type: 'null' }] });
    expect(toGbnfJsonSchema({ type: ['object', 'null'], properties: { a: { type: 'boolean' } }, required: ['a'] })).toEqual({ oneOf: [{ type: 'object', properties: { a: { type: 'boolean' } } }, { type: 'null' }] });
    expect(toGbnfJsonSchema({ type: 'object', properties: { n: { $ref: '#/definitions/N' } }, required: ['n'], definitions: { N: { type: 'number' } } })).toEqual({
      type: 'object',
      properties: { n: { $ref: '#/$defs/N' } },
      $defs: { N: { type: 'number' } },
    });
  });

  it('converts every built-in tool\'s parameters (zod → JSON Schema) into a schema with the same properties', () => {
    for (const spec of Object.values(TOOL_CATALOGUE)) {
      const json = z.toJSONSchema(spec.input) as { properties?: Record<string, unknown> };
      const converted = toGbnfJsonSchema(json) as { type?: string; properties?: Record<string, unknown> };
      expect(converted.type).toBe('object');
      expect(Object.keys(converted.properties ?? {})).toEqual(Object.keys(json.properties ?? {}));
    }
  });
});
