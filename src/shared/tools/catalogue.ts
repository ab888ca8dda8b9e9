import { z } from 'zod';
import type { SideEffects } from '../schemas/tool';

/**
 * The built-in tools as both sides know them: the runtime derives the model's JSON Schemas and the
 * approval rules from this; the tool process validates every call against the same schemas.
 */
export interface BuiltinToolSpec<Input extends z.ZodType = z.ZodType> {
  description: string;
  input: Input;
  sideEffects: SideEffects;
  idempotent: boolean;
  /** Longest a call may take, unless the call asks for less. */
  timeoutMs: number;
  needsNetwork?: boolean;
}

const relativePath = z.string().min(1).max(4096).describe('a path relative to the workspace');

/** The most text one write_file call writes, in UTF-16 units (at most three UTF-8 bytes each). */
export const WRITE_FILE_MAX_CHARS = 10 * 1024 * 1024;

export const TOOL_CATALOGUE = {
  calculator: {
    description: 'Evaluates an arithmetic expression exactly: numbers, + - * / ^ %, and parentheses, e.g. "(2 + 3) * 4" or "20% * 50".',
    input: z.object({ expression: z.string().min(1).max(500).describe('the arithmetic expression') }).strict(),
    sideEffects: 'none',
    idempotent: true,
    timeoutMs: 2000,
  },
  list_files: {
    description: 'Lists the files and folders in a folder of the workspace (the workspace itself by default).',
    input: z.object({ path: relativePath.optional() }).strict(),
    sideEffects: 'none',
    idempotent: true,
    timeoutMs: 10_000,
  },
  read_file: {
    description: 'Reads a text file of the workspace (up to 1 MiB; binary files are described, not read).',
    input: z.object({ path: relativePath }).strict(),
    sideEffects: 'none',
    idempotent: true,
    timeoutMs: 10_000,
  },
  write_file: {
    description: 'Writes a text file in the workspace, creating folders as needed; replaces the file atomically. The previous content is kept so the write can be undone.',
    input: z.object({ path: relativePath, content: z.string().max(WRITE_FILE_MAX_CHARS) }).strict(),
    sideEffects: 'reversible',
    idempotent: true,
    timeoutMs: 10_000,
  },
  run_command: {
    description: 'Runs a shell command in the workspace folder with a minimal environment; returns its exit code and output.',
    input: z
      .object({
        command: z.string().min(1).max(8000),
        timeout_s: z.number().positive().max(600).optional().describe('seconds before the command is killed (default 60)'),
      })
      .strict(),
    sideEffects: 'irreversible',
    idempotent: false,
    timeoutMs: 60_000,
  },
  search_files: {
    description: 'Searches the text files of the workspace for a string (case-insensitive); returns "path:line: text" matches.',
    input: z
      .object({
        query: z.string().min(1).max(500),
        path: relativePath.optional(),
        max_results: z.int().min(1).max(500).optional(),
      })
      .strict(),
    sideEffects: 'none',
    idempotent: true,
    timeoutMs: 30_000,
  },
  http_get: {
    description: 'Fetches a URL with HTTP GET and returns the start of the body (up to 1 MiB). Off unless the operator enables network tools.',
    input: z.object({ url: z.url({ protocol: /^https?$/ }) }).strict(),
    sideEffects: 'irreversible',
    idempotent: false,
    timeoutMs: 15_000,
    needsNetwork: true,
  },
} satisfies Record<string, BuiltinToolSpec>;

export type BuiltinToolName = keyof typeof TOOL_CATALOGUE;
export type BuiltinToolInput<Name extends BuiltinToolName> = z.output<(typeof TOOL_CATALOGUE)[Name]['input']>;

/** Tools whose results Archon writes itself, whatever their input (a sum, a write's confirmation): no outside text reaches the model through them. */
export const TRUSTED_RESULT_TOOLS: ReadonlySet<string> = new Set(['calculator', 'write_file']);

export const BUILTIN_TOOL_NAMES = Object.keys(TOOL_CATALOGUE) as BuiltinToolName[];

export function isBuiltinTool(name: string): name is BuiltinToolName {
  return Object.hasOwn(TOOL_CATALOGUE, name);
}

/** Caps every tool process applies. */
export const TOOL_LIMITS = {
  outputBytes: 64 * 1024,
  readBytes: 1024 * 1024,
  searchFileBytes: 2 * 1024 * 1024,
};
