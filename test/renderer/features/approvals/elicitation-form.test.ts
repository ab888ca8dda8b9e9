import { describe, expect, it } from 'vitest';
import { elicitationContent, elicitationFields, RequestedSchemaSchema } from '../../../../src/renderer/src/features/approvals/elicitation-form';

const schema = RequestedSchemaSchema.parse({
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Full name', description: 'As on your passport' },
    email: { type: 'string', format: 'email' },
    age: { type: 'integer', title: 'Age', minimum: 1, maximum: 130 },
    ratio: { type: 'number', default: 0.5 },
    agree: { type: 'boolean', title: 'Agree' },
    hero: { type: 'string', oneOf: [{ const: 'h1', title: 'Superman' }, { const: 'h2', title: 'Wonder Woman' }], default: 'h2' },
    pet: { type: 'string', enum: ['p1', 'p2'], enumNames: ['Cat', 'Dog'] },
    fish: { type: 'array', items: { anyOf: [{ const: 'f1', title: 'Tuna' }] }, default: ['f1'] },
  },
  required: ['name', 'age'],
});

describe('the elicitation form', () => {
  it('makes one field per property, with titles, choices, defaults and what is required', () => {
    const fields = elicitationFields(schema);
    expect(fields.map(({ key, label, kind, required, initial }) => ({ key, label, kind, required, initial }))).toEqual([
      { key: 'name', label: 'Full name', kind: 'text', required: true, initial: '' },
      { key: 'email', label: 'email', kind: 'text', required: false, initial: '' },
      { key: 'age', label: 'Age', kind: 'integer', required: true, initial: '' },
      { key: 'ratio', label: 'ratio', kind: 'number', required: false, initial: '0.5' },
      { key: 'agree', label: 'Agree', kind: 'boolean', required: false, initial: false },
      { key: 'hero', label: 'hero', kind: 'choice', required: false, initial: 'h2' },
      { key: 'pet', label: 'pet', kind: 'choice', required: false, initial: '' },
      { key: 'fish', label: 'fish', kind: 'choices', required: false, initial: ['f1'] },
    ]);
    expect(fields[1]?.inputType).toBe('email');
    expect(fields[5]?.options).toEqual([{ value: 'h1', label: 'Superman' }, { value: 'h2', label: 'Wonder Woman' }]);
    expect(fields[6]?.options).toEqual([{ value: 'p1', label: 'Cat' }, { value: 'p2', label: 'Dog' }]);
  });

  it('sends typed content and leaves empty optional fields out', () => {
    const fields = elicitationFields(schema);
    expect(elicitationContent(fields, { name: 'Ada', age: '36', agree: true })).toEqual({
      ok: true,
      content: { name: 'Ada', age: 36, ratio: 0.5, agree: true, hero: 'h2', fish: ['f1'] },
    });
  });

  it('holds back what the schema would refuse, saying which field and why', () => {
    const fields = elicitationFields(schema);
    expect(elicitationContent(fields, { name: ' ', age: '2.5', ratio: 'x' })).toEqual({ ok: false, problems: ['Full name: required.', 'Age: enter a whole number.', 'ratio: enter a number.'] });
    expect(elicitationContent(fields, { name: 'Ada', age: '200' })).toEqual({ ok: false, problems: ['Age: at most 130.'] });
  });
});
