import type { GbnfJsonSchema } from 'node-llama-cpp';

/**
 * A JSON Schema (what Archon's zod schemas become) as node-llama-cpp's GbnfJsonSchema, the subset its
 * grammar generator takes. What that subset cannot say (numeric bounds, patterns, most formats,
 * `not`, conditionals) is dropped rather than refused: the answer is checked against the full schema
 * by whoever asked. The grammar writes every listed property, so an optional one may be null,
 * which `withoutNullOptionals` takes out of the answer again.
 */

type Json = Record<string, unknown>;

const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const STRING_FORMATS = new Set(['date-time', 'date', 'time']);
/** Deeper than this is a circular or machine-made schema: any JSON from there on. */
const MAX_DEPTH = 64;

const ANY_JSON: GbnfJsonSchema = { oneOf: [{ type: ['string', 'number', 'boolean', 'null'] }, { type: 'object', additionalProperties: true }, { type: 'array' }] };

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined);
const literal = (value: unknown): value is string | number | boolean | null => value === null || ['string', 'number', 'boolean'].includes(typeof value);

function defined<T extends Json>(schema: T): T {
  return Object.fromEntries(Object.entries(schema).filter(([, value]) => value !== undefined)) as T;
}

function stringSchema(schema: Json): GbnfJsonSchema {
  if (typeof schema.format === 'string' && STRING_FORMATS.has(schema.format)) return { type: 'string', format: schema.format as 'date-time' | 'date' | 'time' };
  return defined({ type: 'string' as const, minLength: count(schema.minLength), maxLength: count(schema.maxLength) });
}

/** An optional property: its value, or null for "left out" (the grammar writes every key; the null is taken out again). */
const optional = (converted: GbnfJsonSchema): GbnfJsonSchema => ({ oneOf: [converted, { type: 'null' }] });

function objectSchema(schema: Json, depth: number): GbnfJsonSchema {
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const property = (key: string, value: unknown) => (required.has(key) ? convert(value, depth + 1) : optional(convert(value, depth + 1)));
  const properties = isObject(schema.properties) ? Object.fromEntries(Object.entries(schema.properties).map(([key, value]) => [key, property(key, value)])) : undefined;
  const extra = schema.additionalProperties;
  const additionalProperties = extra === true || (extra === undefined && !properties) ? true : isObject(extra) ? convert(extra, depth + 1) : undefined;
  return defined({ type: 'object' as const, properties, additionalProperties, minProperties: count(schema.minProperties), maxProperties: count(schema.maxProperties) });
}

function arraySchema(schema: Json, depth: number): GbnfJsonSchema {
  const items = Array.isArray(schema.items) ? undefined : schema.items === undefined || schema.items === true ? undefined : convert(schema.items, depth + 1);
  const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : undefined;
  const prefixItems = tuple?.map((item) => convert(item, depth + 1));
  return defined({ type: 'array' as const, items, prefixItems, minItems: count(schema.minItems), maxItems: count(schema.maxItems) });
}

function ofType(type: string, schema: Json, depth: number): GbnfJsonSchema {
  if (type === 'object') return objectSchema(schema, depth);
  if (type === 'array') return arraySchema(schema, depth);
  if (type === 'string') return stringSchema(schema);
  return { type: type as 'number' | 'integer' | 'boolean' | 'null' };
}

function typed(types: string[], schema: Json, depth: number): GbnfJsonSchema {
  const known = types.filter((type) => PRIMITIVES.has(type) || type === 'object' || type === 'array');
  if (known.length === 0) return ANY_JSON;
  if (known.length === 1) return ofType(known[0] as string, schema, depth);
  return { oneOf: known.map((type) => ofType(type, schema, depth)) };
}

/** `$defs` (or the older `definitions`) kept under the name node-llama-cpp resolves `#/$defs/NAME` in. */
function withDefs(converted: GbnfJsonSchema, schema: Json, depth: number): GbnfJsonSchema {
  const defs = isObject(schema.$defs) ? schema.$defs : isObject(schema.definitions) ? schema.definitions : undefined;
  const holdsDefs = 'oneOf' in converted || '$ref' in converted || ('type' in converted && (converted.type === 'object' || converted.type === 'array'));
  if (!defs || !holdsDefs) return converted;
  return { ...converted, $defs: Object.fromEntries(Object.entries(defs).map(([name, value]) => [name, convert(value, depth + 1)])) } as GbnfJsonSchema;
}

function convert(schema: unknown, depth: number): GbnfJsonSchema {
  if (!isObject(schema) || depth > MAX_DEPTH) return ANY_JSON;
  const description = typeof schema.description === 'string' ? schema.description : undefined;
  const converted = withDefs(convertNode(schema, depth), schema, depth);
  return description && !('$ref' in converted) ? ({ ...converted, description } as GbnfJsonSchema) : converted;
}

function convertNode(schema: Json, depth: number): GbnfJsonSchema {
  if (typeof schema.$ref === 'string') return schema.$ref.startsWith('#/$defs/') ? ({ $ref: schema.$ref } as GbnfJsonSchema) : schema.$ref.startsWith('#/definitions/') ? ({ $ref: schema.$ref.replace('#/definitions/', '#/$defs/') } as GbnfJsonSchema) : ANY_JSON;
  if ('const' in schema && literal(schema.const)) return { const: schema.const };
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every(literal)) return { enum: schema.enum };
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (alternatives && alternatives.length > 0) return { oneOf: alternatives.map((alternative) => convert({ ...schema, anyOf: undefined, oneOf: undefined, ...(alternative as Json) }, depth + 1)) };
  // allOf: the first part's shape; merging schemas is beyond a grammar's subset.
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) return convert({ ...schema, allOf: undefined, ...(schema.allOf[0] as Json) }, depth + 1);
  if (typeof schema.type === 'string') return typed([schema.type], schema, depth);
  if (Array.isArray(schema.type)) return typed(schema.type.filter((type): type is string => typeof type === 'string'), schema, depth);
  if (isObject(schema.properties)) return objectSchema(schema, depth);
  return ANY_JSON;
}

/** The schema as a grammar can take it. */
export function toGbnfJsonSchema(schema: unknown): GbnfJsonSchema {
  return convert(schema, 0);
}

const integerTyped = (schema: unknown): boolean => isObject(schema) && (schema.type === 'integer' || (Array.isArray(schema.type) && schema.type.includes('integer')));

/** A number JSON or the schema cannot hold as written: past what a double holds, or an integer past the safe ones. */
const outOfRange = (value: unknown, schema: unknown): value is number => typeof value === 'number' && (!Number.isFinite(value) || (integerTyped(schema) && !Number.isSafeInteger(value)));

/**
 * A value made under such a grammar as the schema means it: each optional property the model wrote as
 * null left out. The grammar bounds no number, so a model may write one past what JSON can hold
 * (`929e7034…`, which parses to Infinity and would be sent as null) or an integer past the safe ones
 * (`5e20`, which no integer check accepts): an optional one is left out too, a required one is held
 * at the largest safe integer of its sign.
 */
export function withoutNullOptionals(value: unknown, schema: unknown, depth = 0): unknown {
  if (outOfRange(value, schema)) return Math.sign(value) * Number.MAX_SAFE_INTEGER;
  if (Array.isArray(value)) return value.map((item) => withoutNullOptionals(item, isObject(schema) ? schema.items : undefined, depth + 1));
  if (!isObject(schema) || depth > MAX_DEPTH) return value;
  if (!isObject(value) || !isObject(schema.properties)) return value;
  const properties = schema.properties;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const unusable = (key: string, item: unknown) => item === null || outOfRange(item, properties[key]);
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, item]) => !(key in properties && !required.has(key) && unusable(key, item)))
      .map(([key, item]) => [key, withoutNullOptionals(item, properties[key], depth + 1)]),
  );
}
