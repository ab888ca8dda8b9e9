import { readFileSync } from 'node:fs';
import { ArchonError } from '../../shared/errors';
import type { SecretRedactor } from './redactor';

export interface ApiKeyFlags {
  apiKey?: string;
  apiKeyFile?: string;
}

function readKeyFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ArchonError('CONFIG_INVALID', `Cannot read the API key file ${file}: ${(error as Error).message}. Pass --api-key-file with a readable file that holds the key.`, { cause: error });
  }
  const key = text.trim();
  if (!key || /\s/.test(key)) throw new ArchonError('CONFIG_INVALID', `The API key file ${file} must hold the key alone, on one line.`);
  return key;
}

/**
 * The key the operator gave on the command line: `--api-key`, else `--api-key-file`, else
 * OPENAI_API_KEY. Each of them is a secret to redact, the one not used included: a tool that can
 * read this process's command line or environment could print it.
 */
export function apiKeyFromCommandLine(flags: ApiKeyFlags, redactor: SecretRedactor, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const fromFile = flags.apiKeyFile ? readKeyFile(flags.apiKeyFile) : undefined;
  for (const secret of [flags.apiKey, fromFile, env.OPENAI_API_KEY]) redactor.add(secret);
  return flags.apiKey || fromFile || env.OPENAI_API_KEY || undefined;
}
