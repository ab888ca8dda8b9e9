import { readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { ArchonError } from '../../shared/errors';

/** What a secret file is called in what the operator is told. */
export interface SecretFileKind {
  /** "API key": what the file is named for. */
  name: string;
  /** "key": what it holds. */
  noun: string;
  /** The flag that names the file. */
  flag: string;
  /** Where the file may go instead, under ~/.config/archon/. */
  example: string;
  /** Another way to give the secret, when there is one (", or give the key in OPENAI_API_KEY"). */
  otherwise?: string;
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** A secret file the run's tools can read could reach the model in a form redaction misses: it must lie outside the workspace. */
function refuseInsideWorkspace(file: string, workspace: string, kind: SecretFileKind): void {
  const folder = realPath(workspace);
  const path = relative(folder, realPath(file));
  if (path.startsWith('..') || isAbsolute(path)) return;
  throw new ArchonError('CONFIG_INVALID', `The ${kind.name} file ${file} is inside the workspace ${folder}, where the run's tools can read it. Move it outside the workspace (for example to ~/.config/archon/${kind.example}, mode 600) and pass that path to ${kind.flag}${kind.otherwise ?? ''}.`);
}

/** The secret a file holds, alone on one line; a file inside `workspace` is refused. */
export function readSecretFile(file: string, workspace: string, kind: SecretFileKind): string {
  refuseInsideWorkspace(file, workspace, kind);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ArchonError('CONFIG_INVALID', `Cannot read the ${kind.name} file ${file}: ${(error as Error).message}. Pass ${kind.flag} with a readable file that holds the ${kind.noun}.`, { cause: error });
  }
  const secret = text.trim();
  if (!secret || /\s/.test(secret)) throw new ArchonError('CONFIG_INVALID', `The ${kind.name} file ${file} must hold the ${kind.noun} alone, on one line.`);
  return secret;
}
