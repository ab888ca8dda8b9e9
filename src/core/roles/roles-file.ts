import { RolesFileSchema, type StoredRole } from '../../shared/schemas/roles';
import { readJsonConfigFile } from '../json-config-file';

/** A role's key, for the origin of its server. */
export interface RoleKey {
  url: string;
  apiKey: string;
}

/** `--roles FILE`: the roles as a run stores them (no key), and their keys apart, for the API-key handling. */
export function readRolesFile(path: string): { roles: Record<string, StoredRole>; keys: RoleKey[] } {
  const file = readJsonConfigFile(path, RolesFileSchema, {
    label: 'roles file',
    flag: '--roles',
    shape: '{"roles": {"NAME": {"description"?, "model"?: {"url", "name", "apiKey"?}, "tools"?: ["TOOL", …] or "all", "systemPrompt"?, "maxConcurrency"?}}}, each NAME 1-32 letters, digits, "_" or "-"',
  });
  const roles: Record<string, StoredRole> = {};
  const keys: RoleKey[] = [];
  for (const [name, role] of Object.entries(file.roles)) {
    const { model, ...rest } = role;
    if (!model) {
      roles[name] = rest;
      continue;
    }
    const { apiKey, ...server } = model;
    roles[name] = { ...rest, model: server };
    if (apiKey) keys.push({ url: server.url, apiKey });
  }
  return { roles, keys };
}
