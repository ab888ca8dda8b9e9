/**
 * The tool-call dialects Archon reads: its own text protocol and every family of local models
 * (docs/model-protocol.md lists each with its source).
 */
export const DIALECT_NAMES = [
  'archon',
  'hermes',
  'qwen3-coder',
  'llama3-json',
  'python-tag',
  'pythonic',
  'mistral',
  'deepseek',
  'functionary-v3',
  'functionary-v3.1',
  'functools',
  'granite',
  'nemotron',
  'xlam',
  'command-r',
  'glm',
  'minimax',
  'kimi-k2',
  'harmony',
  'gemma',
  'lfm2',
  'olmo',
  'deepseek-dsml',
  'xml-function',
  'minicpm',
  'gigachat',
  'apertus',
  'react',
  'langchain-json',
] as const;

export type DialectName = (typeof DIALECT_NAMES)[number];
