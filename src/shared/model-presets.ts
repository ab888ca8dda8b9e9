/** Where the usual OpenAI-compatible servers listen by default. */
export const MODEL_PRESETS = {
  ollama: 'http://127.0.0.1:11434/v1',
  'lm-studio': 'http://127.0.0.1:1234/v1',
  'llama-cpp': 'http://127.0.0.1:8080/v1',
  vllm: 'http://127.0.0.1:8000/v1',
  openai: 'https://api.openai.com/v1',
} as const;

export type ModelPreset = keyof typeof MODEL_PRESETS;

/** A preset's name or a URL; names are matched case-insensitively. */
export function resolveModelUrl(value: string): string {
  const preset = value.toLowerCase() as ModelPreset;
  return Object.hasOwn(MODEL_PRESETS, preset) ? MODEL_PRESETS[preset] : value;
}
