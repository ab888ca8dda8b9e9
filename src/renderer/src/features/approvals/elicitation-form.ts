import { z } from 'zod';

/** A choice as the schema gives it: a bare value, or a value with a title. */
const TitledSchema = z.object({ const: z.string(), title: z.string().optional() });

const PropertySchema = z.object({
  type: z.enum(['string', 'number', 'integer', 'boolean', 'array']),
  title: z.string().optional(),
  description: z.string().optional(),
  format: z.string().optional(),
  enum: z.array(z.string()).optional(),
  enumNames: z.array(z.string()).optional(),
  oneOf: z.array(TitledSchema).optional(),
  items: z.object({ enum: z.array(z.string()).optional(), anyOf: z.array(TitledSchema).optional() }).optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  default: z.unknown().optional(),
});
type Property = z.infer<typeof PropertySchema>;

/** The flat object schema MCP servers send with an elicitation request. */
export const RequestedSchemaSchema = z.object({
  type: z.literal('object').optional(),
  properties: z.record(z.string(), PropertySchema),
  required: z.array(z.string()).optional(),
});

export const ElicitationActionSchema = z.object({ server: z.string(), message: z.string(), requestedSchema: RequestedSchemaSchema });
export type ElicitationAction = z.infer<typeof ElicitationActionSchema>;

export type FieldValue = string | boolean | string[];
export interface Option {
  value: string;
  label: string;
}
export interface Field {
  key: string;
  label: string;
  description: string | undefined;
  required: boolean;
  kind: 'text' | 'number' | 'integer' | 'boolean' | 'choice' | 'choices';
  inputType: 'text' | 'email' | 'url' | 'date';
  options: Option[];
  minimum: number | undefined;
  maximum: number | undefined;
  initial: FieldValue;
}

const INPUT_TYPES: Record<string, Field['inputType']> = { email: 'email', uri: 'url', date: 'date' };

function optionsOf(property: Property): Option[] {
  const titled = property.oneOf ?? property.items?.anyOf;
  if (titled) return titled.map((option) => ({ value: option.const, label: option.title ?? option.const }));
  const values = property.enum ?? property.items?.enum ?? [];
  return values.map((value, index) => ({ value, label: property.enumNames?.[index] ?? value }));
}

function kindOf(property: Property, options: Option[]): Field['kind'] {
  if (property.type === 'array') return 'choices';
  if (property.type === 'string') return options.length > 0 ? 'choice' : 'text';
  return property.type;
}

/** The schema's default, else nothing: an optional choice starts unchosen, a required one at its first option. */
function initialOf(kind: Field['kind'], fallback: unknown, options: Option[], required: boolean): FieldValue {
  if (kind === 'boolean') return fallback === true;
  if (kind === 'choices') return Array.isArray(fallback) ? fallback.filter((value): value is string => typeof value === 'string') : [];
  if (fallback !== undefined && fallback !== null) return String(fallback);
  return kind === 'choice' && required ? (options[0]?.value ?? '') : '';
}

/** The form for a requested schema: one field per property, in the schema's order. */
export function elicitationFields(schema: ElicitationAction['requestedSchema']): Field[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([key, property]) => {
    const options = optionsOf(property);
    const kind = kindOf(property, options);
    const needed = required.has(key);
    return {
      key,
      label: property.title ?? key,
      description: property.description,
      required: needed,
      kind,
      inputType: INPUT_TYPES[property.format ?? ''] ?? 'text',
      options,
      minimum: property.minimum,
      maximum: property.maximum,
      initial: initialOf(kind, property.default, options, needed),
    };
  });
}

function numberProblem(field: Field, value: number): string | null {
  if (!Number.isFinite(value) || (field.kind === 'integer' && !Number.isInteger(value))) return `${field.label}: enter ${field.kind === 'integer' ? 'a whole number' : 'a number'}.`;
  if (field.minimum !== undefined && value < field.minimum) return `${field.label}: at least ${field.minimum}.`;
  if (field.maximum !== undefined && value > field.maximum) return `${field.label}: at most ${field.maximum}.`;
  return null;
}

/** What the form holds, as the content the server asked for: typed values, empty optional fields left out. */
export function elicitationContent(fields: readonly Field[], values: Record<string, FieldValue>): { ok: true; content: Record<string, unknown> } | { ok: false; problems: string[] } {
  const content: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const field of fields) {
    const value = values[field.key] ?? field.initial;
    if (typeof value === 'boolean' || Array.isArray(value)) {
      if (field.required && Array.isArray(value) && value.length === 0) problems.push(`${field.label}: choose at least one.`);
      else content[field.key] = value;
      continue;
    }
    if (value.trim() === '') {
      if (field.required) problems.push(`${field.label}: required.`);
      continue;
    }
    if (field.kind === 'number' || field.kind === 'integer') {
      const problem = numberProblem(field, Number(value));
      if (problem) problems.push(problem);
      else content[field.key] = Number(value);
      continue;
    }
    content[field.key] = value;
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, content };
}
