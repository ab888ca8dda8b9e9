import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { z } from 'zod';
import { ArchonError, describeZodError } from '../shared/errors';

/** What a configuration file a flag names is, for the sentences that say what is wrong with it. */
export interface ConfigFileKind {
  /** e.g. "MCP configuration". */
  label: string;
  flag: string;
  /** The form it should have, as a phrase after "It holds". */
  shape: string;
}

/** A JSON file a flag names, checked against its schema; one that cannot be used says which, why and what it should hold. */
export function readJsonConfigFile<T extends z.ZodType>(path: string, schema: T, kind: ConfigFileKind): z.infer<T> {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ArchonError('CONFIG_INVALID', `The ${kind.label} ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}). Pass ${kind.flag} with an existing JSON file.`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ArchonError('CONFIG_INVALID', `The ${kind.label} ${file} is not valid JSON: ${(error as Error).message}. It holds ${kind.shape}.`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new ArchonError('CONFIG_INVALID', `The ${kind.label} ${file} is not usable: ${describeZodError(parsed.error)}. It holds ${kind.shape}.`);
  return parsed.data;
}
