/**
 * Where the auditor keeps its key and the signed head: outside every data dir, in the user's config
 * folder (or ARCHON_AUDIT_KEY_DIR). One rule for the auditor, which uses the folder, and the tool
 * sandbox, which hides it.
 */
export function auditKeyDir(env: Readonly<Record<string, string | undefined>>, home: string): string {
  return env.ARCHON_AUDIT_KEY_DIR ?? `${env.XDG_CONFIG_HOME ?? `${home}/.config`}/archon-audit-keys`;
}
