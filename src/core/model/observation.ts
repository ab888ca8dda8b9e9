/** Long tool output is cut, and the model is told so. */
export const MAX_OBSERVATION_CHARS = 8000;

export function capObservation(text: string, limit = MAX_OBSERVATION_CHARS): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}\n[truncated: ${text.length - limit} more characters not shown]`;
}
