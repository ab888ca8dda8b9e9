/** Bidirectional overrides and isolates: they reorder what a terminal shows (a "Trojan Source" line). */
const BIDI_CONTROLS = new Set([0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]);

function isControl(code: number, keepNewlines: boolean): boolean {
  if (code === 0x0a) return !keepNewlines;
  if (code === 0x09) return false;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029 || BIDI_CONTROLS.has(code);
}

function shown(code: number): string {
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Text from a model, a tool or the page, made safe to write to a terminal: every control character
 * (C0 and C1, so ESC and every escape sequence it would start: OSC 52 clipboard writes, titles,
 * erase-line, cursor moves; a carriage return that would overwrite the line) is shown as `\x1b`,
 * `\x0d`, … instead of acting. Newlines stay unless `keepNewlines` is false, for text that must stay on its line.
 */
export function terminalText(text: string, { keepNewlines = true }: { keepNewlines?: boolean } = {}): string {
  let safe = '';
  for (const char of keepNewlines ? text.replace(/\r\n/g, '\n') : text) {
    const code = char.codePointAt(0) ?? 0;
    safe += isControl(code, keepNewlines) ? shown(code) : char;
  }
  return safe;
}
