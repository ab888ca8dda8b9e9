import { formatPatch, OMIT_HEADERS, structuredPatch } from 'diff';
import type { ApprovalPreview } from '../../shared/schemas/approval';
import type { ToolResult } from '../../shared/schemas/tool';
import { readCommandHazards } from './shell-parser';

/*
 * What a call will do, shown with its approval: worked out here, on the trusted side, from what the
 * workspace-confined reader returned, never by the UI.
 */

/** Beyond this many changed lines the diff is not worked out; the file is said to be replaced. */
const MAX_EDIT_LENGTH = 5_000;
/** The longest diff carried with an approval; the rest is cut and marked. */
export const MAX_DIFF_CHARS = 64 * 1024;

/**
 * A write of `content` to `path`, against `current`: read_file's answer for that path (a missing
 * file creates one; text gets a unified diff; a binary, too large or unreadable file is replaced whole).
 */
export function writePreview(path: string, content: string, current: ToolResult): ApprovalPreview {
  if (current.status !== 'success') {
    if (current.metadata.missing === true) return { kind: 'new_file', path, bytes: Buffer.byteLength(content) };
    return { kind: 'replaces', path, reason: current.content };
  }
  if (typeof current.metadata.bytes === 'number' && current.metadata.bytes > Buffer.byteLength(current.content)) {
    return { kind: 'replaces', path, reason: `the current file has ${current.metadata.bytes} bytes, too many to compare` };
  }
  const patch = structuredPatch(path, path, current.content, content, undefined, undefined, { context: 3, maxEditLength: MAX_EDIT_LENGTH });
  if (!patch) return { kind: 'replaces', path, reason: 'the file changes too much to show line by line' };
  const diff = formatPatch(patch, OMIT_HEADERS);
  return { kind: 'diff', path, diff: diff.slice(0, MAX_DIFF_CHARS), truncated: diff.length > MAX_DIFF_CHARS };
}

/** A command: where it runs and its dangerous parts. */
export async function commandPreview(command: string, cwd: string): Promise<ApprovalPreview> {
  return { kind: 'command', cwd, hazards: await readCommandHazards(command) };
}
