import { describe, expect, it } from 'vitest';
import { deterministicChecks } from '../../../src/core/validation/checks';
import { evidenceOf } from '../../../src/core/validation/step-validator';

const step = (expected_output?: string) => ({ id: 's', description: 'd', dependencies: [], ...(expected_output ? { expected_output } : {}) });
const failed = (expected: string | undefined, result: string, evidence = [] as { text: string; failed: boolean }[]) =>
  deterministicChecks(step(expected), result, evidence)
    .filter((check) => !check.passed)
    .map((check) => check.name);

describe('the deterministic checks of a result', () => {
  it('refuse an empty result and a short refusal, and let an apology that goes on to answer pass', () => {
    expect(failed(undefined, '  ')).toEqual(['result']);
    expect(failed(undefined, "I'm sorry, but I can't help with that.")).toEqual(['result']);
    expect(failed(undefined, `Sorry for the delay. ${'The report covers every quarter in detail. '.repeat(10)}`)).toEqual([]);
  });

  it('hold the expected format when one is named, and only then', () => {
    expect(failed('a JSON object', 'name: Ada')).toEqual(['format_json']);
    expect(failed('a JSON object', 'Here:\n```json\n{"name": "Ada",}\n```')).toEqual([]);
    expect(failed('the number of files', 'several')).toEqual(['format_number']);
    expect(failed('the number of files', 'There are 12.')).toEqual([]);
    expect(failed('a list of names', 'Ada')).toEqual(['format_list']);
    expect(failed('a list of names', '- Ada\n- Grace')).toEqual([]);
    expect(failed('the file path of the report', 'the report')).toEqual(['format_path']);
    expect(failed('the file path of the report', 'It is at out/report.md')).toEqual([]);
    expect(failed('a short summary in prose', 'Anything at all.')).toEqual([]);
  });

  it('check the JSON against a schema the expected output declares', () => {
    const expected = 'JSON: {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}';
    expect(failed(expected, '{"n": 3}')).toEqual([]);
    expect(failed(expected, '{"n": "three"}')).toEqual(['schema']);
    expect(failed(expected, 'three')).toEqual(['schema']);
  });

  it('fail a result that hides the last tool failure, not one that reports it or came after a success', () => {
    const error = { text: 'error: ENOENT: no such file', failed: true };
    expect(failed(undefined, 'Done.', [error])).toEqual(['tool_errors_resolved']);
    expect(failed(undefined, 'The file could not be read.', [error])).toEqual([]);
    expect(failed(undefined, 'The worker died; carried on.', [error])).toEqual([]);
    expect(failed(undefined, 'Done.', [error, { text: 'ok', failed: false }])).toEqual([]);
  });
});

describe('the evidence of a step', () => {
  it('is its tool results: tool messages, or Observation lines in text mode; an unknown outcome is not a failure', () => {
    expect(
      evidenceOf([
        { role: 'system', content: 's' },
        { role: 'user', content: 'Step s: d' },
        { role: 'tool', toolCallId: '1', content: 'timeout: took too long' },
        { role: 'user', content: 'Observation: 42\nObservation: error: bad input' },
        { role: 'tool', toolCallId: '2', content: 'error: Outcome unknown: this call started before Archon was interrupted' },
      ]),
    ).toEqual([
      { text: 'timeout: took too long', failed: true },
      { text: '42', failed: false },
      { text: 'error: bad input', failed: true },
      { text: 'error: Outcome unknown: this call started before Archon was interrupted', failed: false },
    ]);
  });
});
