import { describe, expect, it } from 'vitest';
import { calculator, evaluateExpression } from '../../../src/executor/tools/calculator';

describe('calculator', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['2 ^ 3 ^ 2', 512],
    ['-2 ^ 2', -4],
    ['10 / 4', 2.5],
    ['10 % 3', 1],
    ['20% * 50', 10],
    ['50 * 20%', 10],
    ['20%*50', 10],
    ['0.1 + 0.2', 0.30000000000000004],
    ['.5 * 4', 2],
    ['1e3 / 8', 125],
    ['3 × 4 ÷ 2', 6],
    ['--3', 3],
    ['  ( ( 7 ) )  ', 7],
  ])('%s = %s', (expression, expected) => {
    expect(evaluateExpression(expression)).toBeCloseTo(expected, 12);
  });

  it.each([
    ['', /empty/],
    ['2 +', /ends too early/],
    ['(1 + 2', /never closed/],
    ['1 / 0', /Division by zero/],
    ['process.exit(1)', /Unexpected "p"/],
    ['2 ** 3', /Unexpected "\*"/],
    ['1 2', /Unexpected "2"/],
    ['9 ^ 999', /not a finite number/],
  ])('refuses %j with a message saying what it takes', (expression, message) => {
    expect(() => evaluateExpression(expression)).toThrow(message);
  });

  it('answers as a tool: success with a tidy number, error with the reason', () => {
    expect(calculator({ expression: '0.1 + 0.2' })).toEqual({ status: 'success', content: '0.3', metadata: {} });
    expect(calculator({ expression: '1/0' }).status).toBe('error');
  });
});
