import type { AnswerFormat } from '../../shared/schemas/goal-contract';
import { balancedEnd } from '../model/lenient-json';

/** Whether an answer has a required form, decided by parsing it; `detail` says why not, in words the model can act on. */
export type FormatCheck = { holds: true } | { holds: false; detail: string };

const NUMBER = /[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]?\d+)?%?/gi;
/** Markdown and quoting a model wraps a bare value in. */
const WRAPPING = /^[\s`*_"'“”(]+|[\s`*_"'“”).!]+$/g;

function numbersIn(text: string): string[] {
  // A list marker or an ordinal heading ("1." at a line's start) is no value of the answer.
  return [...text.replace(/^\s*\d+[.)]\s+/gm, ' ').matchAll(NUMBER)].map((match) => match[0]);
}

/**
 * A number answer: the answer is one number, bare or in a short sentence that states exactly one
 * ("There are 42 lines."). Prose stating several numbers does not say which is the answer.
 */
export function numberAnswer(text: string): FormatCheck {
  const bare = text.trim().replace(WRAPPING, '');
  if (bare !== '' && bare.replace(NUMBER, '') === '') return { holds: true };
  // A worked result ("12 * 7 = 84") answers with what follows its last equals sign.
  const worked = bare.split('=').at(-1)?.replace(WRAPPING, '') ?? '';
  if (bare.includes('=') && worked !== '' && worked.replace(NUMBER, '') === '') return { holds: true };
  const numbers = numbersIn(text);
  if (numbers.length === 1) return { holds: true };
  if (numbers.length === 0) return { holds: false, detail: 'The answer must be a number, and it holds none.' };
  return { holds: false, detail: `The answer must be one number, and it holds ${numbers.length} (${numbers.slice(0, 5).join(', ')}): give only the number that answers.` };
}

function parsesAsJson(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}

/** A JSON answer: the object or array it holds (fenced or not) parses as JSON as written; a repaired one is not what was asked. */
export function jsonAnswer(text: string): FormatCheck {
  const start = text.search(/[[{]/);
  if (start < 0) return { holds: false, detail: 'The answer must be JSON, and it holds no JSON object or array.' };
  if (parsesAsJson(text.slice(start, balancedEnd(text, start)))) return { holds: true };
  return { holds: false, detail: 'The answer must be JSON, and what it holds does not parse as a JSON object or array.' };
}

export function checkAnswerFormat(format: AnswerFormat, text: string): FormatCheck {
  return format === 'number' ? numberAnswer(text) : jsonAnswer(text);
}
