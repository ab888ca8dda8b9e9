import { ApiKeys } from './api-keys';
import type { SecretRedactor } from './redactor';
import { readSecretFile, type SecretFileKind } from './secret-file';

export interface ApiKeyFlags {
  apiKey?: string;
  apiKeyFile?: string;
  /** The run's workspace (default: the current folder), where a key file must not be. */
  workspace?: string;
}

const API_KEY_FILE: SecretFileKind = { name: 'API key', noun: 'key', flag: '--api-key-file', example: 'api-key', otherwise: ', or give the key in OPENAI_API_KEY' };

/**
 * The key the operator gave on the command line: `--api-key`, else `--api-key-file`, else
 * OPENAI_API_KEY. Each of them is a secret to redact, the one not used included: a tool that can
 * read this process's command line or environment could print it.
 */
export function apiKeyFromCommandLine(flags: ApiKeyFlags, redactor: SecretRedactor, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const fromFile = flags.apiKeyFile ? readSecretFile(flags.apiKeyFile, flags.workspace ?? process.cwd(), API_KEY_FILE) : undefined;
  for (const secret of [flags.apiKey, fromFile, env.OPENAI_API_KEY]) redactor.add(secret);
  return flags.apiKey || fromFile || env.OPENAI_API_KEY || undefined;
}

/**
 * The command line's key, bound to the origin of the model server it was given for (the run's): one
 * key, one origin. Any other server, a role's included, gets no key unless one is given for it.
 */
export function commandLineApiKeys(flags: ApiKeyFlags, redactor: SecretRedactor, modelUrl: string | undefined, env: NodeJS.ProcessEnv = process.env): ApiKeys {
  const keys = new ApiKeys(redactor);
  const key = apiKeyFromCommandLine(flags, redactor, env);
  if (key && modelUrl) keys.remember(modelUrl, key);
  return keys;
}
