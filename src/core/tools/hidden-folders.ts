import { homedir } from 'node:os';
import { auditKeyDir } from '../../shared/audit-key-dir';

/** What no tool may ever see, even in a workspace that holds it: the user's home, Archon's data dir, and the auditor's key folder. */
export function foldersHiddenFromTools(dataDir: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return [homedir(), dataDir, auditKeyDir(env, homedir())];
}
