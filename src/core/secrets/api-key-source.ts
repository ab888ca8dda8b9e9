import { readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { ArchonError } from '../../shared/errors';
import { ApiKeys } from './api-keys';
import type { SecretRedactor } from './redactor';

export interface ApiKeyFlags {
  apiKey?: string;
  apiKeyFile?: string;
  /** The run's workspace (default: the current folder), where a key file must not be. */
  workspace?: string;
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** A key file the run's tools can read could reach the model in a form redaction misses: it must lie outside the workspace. */
function refuseInsideWorkspace(file: string, workspace: string): void {
  const folder = realPath(workspace);
  const path = relative(folder, realPath(file));
  if (path.startsWith('..') || isAbsolute(path)) return;
  throw new ArchonError('CONFIG_INVALID', `The API key file ${file} is inside the workspace ${folder}, where the run's tools can read it. Move it outside the workspace (for example to ~/.config/archon/api-key, mode 600) and pass that path to --api-key-file, or give the key in OPENAI_API_KEY.`);
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
  if (flags.apiKeyFile) refuseInsideWorkspace(flags.apiKeyFile, flags.workspace ?? process.cwd());
  const fromFile = flags.apiKeyFile ? readKeyFile(flags.apiKeyFile) : undefined;
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
