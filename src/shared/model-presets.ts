/**
 * The built-in engine's place in a run's options. Archon starts the engine on loopback at a port of
 * the system's choosing when a run needs it; this address (port 0, which nothing can listen on) only
 * names it, so a resumed run starts the engine again.
 */
export const BUILTIN_MODEL_URL = 'http://127.0.0.1:0/builtin/v1';

/** Where the usual OpenAI-compatible servers listen by default, and `builtin`: Archon's own engine, no server to install. */
export const MODEL_PRESETS = {
  builtin: BUILTIN_MODEL_URL,
  ollama: 'http://127.0.0.1:11434/v1',
  'lm-studio': 'http://127.0.0.1:1234/v1',
  'llama-cpp': 'http://127.0.0.1:8080/v1',
  vllm: 'http://127.0.0.1:8000/v1',
  openai: 'https://api.openai.com/v1',
} as const;

export type ModelPreset = keyof typeof MODEL_PRESETS;

/** Whether a run's model URL is the built-in engine's. */
export const isBuiltinModelUrl = (url: string): boolean => url.replace(/\/+$/, '') === BUILTIN_MODEL_URL;

/** A preset's name or a URL; names are matched case-insensitively. */
export function resolveModelUrl(value: string): string {
  const preset = value.toLowerCase() as ModelPreset;
  return Object.hasOwn(MODEL_PRESETS, preset) ? MODEL_PRESETS[preset] : value;
}

/** Levenshtein distance: the fewest single-character edits that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The preset a mistyped name was most likely meant to be ("olama" → ollama), within two edits. */
export function nearestModelPreset(value: string): ModelPreset | null {
  const typed = value.toLowerCase();
  const ranked = (Object.keys(MODEL_PRESETS) as ModelPreset[]).map((name) => ({ name, distance: editDistance(typed, name) })).sort((a, b) => a.distance - b.distance);
  const best = ranked[0];
  return best && best.distance <= 2 ? best.name : null;
}

/** A `--model-url` value as a base URL (`builtin`: the built-in engine's), or why it is neither a URL nor a preset (with the preset it was likely meant to be). */
export function parseModelUrl(value: string): { url: string } | { problem: string } {
  const url = resolveModelUrl(value);
  if (/^https?:\/\//i.test(url) && URL.canParse(url)) return { url };
  const near = nearestModelPreset(value);
  const presets = Object.keys(MODEL_PRESETS).join(', ');
  return { problem: `"${value}" is neither an http(s) URL nor a preset${near ? `: did you mean ${near}?` : ''} (presets: ${presets})` };
}
