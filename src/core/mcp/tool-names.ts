import { createHash } from 'node:crypto';

/** What models accept as a function name (OpenAI's limit, which local servers follow). */
export const MAX_TOOL_NAME = 64;
const VALID = /^[A-Za-z0-9_-]+$/;

function shortHash(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/**
 * Each MCP tool's registered name, `SERVER__TOOL`. A name that fits and uses only letters, digits,
 * `_` and `-` is kept; any other is cleaned and cut, and ends in a hash of the tool's real name, so
 * the same tool always gets the same name and two tools never share one, nor one of the `reserved`
 * names (the built-in tools'). Server names hold no "__" and do not end in "_", so the prefix names
 * one server and two servers' tools never meet.
 */
export function registeredToolNames(server: string, tools: readonly string[], reserved: readonly string[] = []): Map<string, string> {
  const names = new Map<string, string>();
  const taken = new Set<string>(reserved);
  for (const tool of [...tools].sort()) {
    const plain = `${server}__${tool}`;
    let name = plain;
    for (let length = 8; !(VALID.test(name) && name.length <= MAX_TOOL_NAME) || taken.has(name); length += 4) {
      const suffix = `_${shortHash(tool, length)}`;
      name = `${plain.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
      if (length >= 64) break;
    }
    taken.add(name);
    names.set(tool, name);
  }
  return names;
}

/** The approval setting key that covers every tool of a server. */
export function serverWildcard(server: string): string {
  return `${server}__*`;
}
