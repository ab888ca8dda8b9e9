import type { ToolResult } from '../../shared/schemas/tool';
import { result } from './tool-context';

/**
 * Arithmetic without eval: + - * / ^ % and parentheses. `%` is a percentage after a value
 * ("20% * 50" is 10) and the remainder between two values ("10 % 3" is 1).
 */

type Token = { kind: 'number'; value: number; at: number } | { kind: 'op'; value: string; at: number };

const HELP = 'The calculator takes numbers, + - * / ^ %, and parentheses, e.g. "(2 + 3) * 4" or "20% * 50".';
const MAX_LENGTH = 500;

class CalculatorError extends Error {}

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|([-+*/^%()×÷]))/y;
  let index = 0;
  while (index < expression.length) {
    if (/^\s+$/.test(expression.slice(index))) break;
    pattern.lastIndex = index;
    const match = pattern.exec(expression);
    if (!match) throw new CalculatorError(`Unexpected "${expression.slice(index).trim()[0]}" at position ${index + 1}. ${HELP}`);
    const at = index;
    index = pattern.lastIndex;
    if (match[1] !== undefined) tokens.push({ kind: 'number', value: Number(match[1]), at });
    else tokens.push({ kind: 'op', value: (match[2] as string).replace('×', '*').replace('÷', '/'), at });
  }
  return tokens;
}

class Parser {
  private position = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): number {
    if (this.tokens.length === 0) throw new CalculatorError(`The expression is empty. ${HELP}`);
    const value = this.expression();
    const extra = this.tokens[this.position];
    if (extra) throw new CalculatorError(`Unexpected "${extra.value}" at position ${extra.at + 1}. ${HELP}`);
    return value;
  }

  private peek(offset = 0): Token | undefined {
    return this.tokens[this.position + offset];
  }

  private isOp(value: string, offset = 0): boolean {
    const token = this.peek(offset);
    return token?.kind === 'op' && token.value === value;
  }

  private startsOperand(offset: number): boolean {
    const token = this.peek(offset);
    return token !== undefined && (token.kind === 'number' || token.value === '(');
  }

  private expression(): number {
    let value = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.tokens[this.position++] as Token).value;
      const right = this.term();
      value = op === '+' ? value + right : value - right;
    }
    return value;
  }

  private term(): number {
    let value = this.unary();
    while (this.isOp('*') || this.isOp('/') || (this.isOp('%') && this.startsOperand(1))) {
      const op = (this.tokens[this.position++] as Token).value;
      const right = this.unary();
      if ((op === '/' || op === '%') && right === 0) throw new CalculatorError('Division by zero.');
      value = op === '*' ? value * right : op === '/' ? value / right : value % right;
    }
    return value;
  }

  private unary(): number {
    if (this.isOp('-')) {
      this.position++;
      return -this.unary();
    }
    if (this.isOp('+')) {
      this.position++;
      return this.unary();
    }
    return this.power();
  }

  private power(): number {
    const base = this.percent();
    if (!this.isOp('^')) return base;
    this.position++;
    return base ** this.unary();
  }

  private percent(): number {
    let value = this.primary();
    while (this.isOp('%') && !this.startsOperand(1)) {
      this.position++;
      value /= 100;
    }
    return value;
  }

  private primary(): number {
    const token = this.peek();
    if (!token) throw new CalculatorError(`The expression ends too early. ${HELP}`);
    this.position++;
    if (token.kind === 'number') return token.value;
    if (token.value === '(') {
      const value = this.expression();
      if (!this.isOp(')')) throw new CalculatorError(`A "(" is never closed. ${HELP}`);
      this.position++;
      return value;
    }
    throw new CalculatorError(`Unexpected "${token.value}" at position ${token.at + 1}. ${HELP}`);
  }
}

export function evaluateExpression(expression: string): number {
  if (expression.length > MAX_LENGTH) throw new CalculatorError(`The expression is longer than ${MAX_LENGTH} characters.`);
  const value = new Parser(tokenize(expression)).parse();
  if (!Number.isFinite(value)) throw new CalculatorError('The result is not a finite number.');
  return value;
}

export function formatNumber(value: number): string {
  return String(Number(value.toPrecision(12)));
}

export function calculator({ expression }: { expression: string }): ToolResult {
  try {
    return result('success', formatNumber(evaluateExpression(expression)));
  } catch (error) {
    if (error instanceof CalculatorError) return result('error', error.message);
    throw error;
  }
}
