import { existsSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve, sep } from 'node:path';
import { ArchonError } from '../../shared/errors';
import { auditKeyDir } from '../../shared/audit-key-dir';

/** What no tool may ever see, even in a workspace that holds it: the user's home, Archon's data dir, and the auditor's key folder. */
export function foldersHiddenFromTools(dataDir: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return [homedir(), dataDir, auditKeyDir(env, homedir())];
}

function realPath(path: string): string {
  return existsSync(path) ? realpathSync(path) : resolve(path);
}

/**
 * A workspace that is the data dir or the audit key folder, or lies inside one, would hand the tools
 * what they must never see (a folder hidden inside the workspace is covered; the workspace itself
 * cannot be): refused. The other way round is fine.
 */
export function refuseWorkspaceInArchon(workspace: string, dataDir: string, env: NodeJS.ProcessEnv = process.env): void {
  const real = realPath(workspace);
  const folders = [
    { folder: dataDir, what: "Archon's data dir" },
    { folder: auditKeyDir(env, homedir()), what: 'the audit key folder' },
  ];
  for (const { folder, what } of folders) {
    const hidden = realPath(folder);
    if (real === hidden || real.startsWith(`${hidden}${sep}`)) {
      throw new ArchonError('CONFIG_INVALID', `The workspace ${workspace} is ${what} (${folder}) or inside it, which tools must never see. Choose another folder with --workspace.`);
    }
  }
}
