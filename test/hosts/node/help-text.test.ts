import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { budgetPreset } from '../../../src/hosts/node/command-flags';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { planReply, startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { runArchon, spawnArchon } from '../../support/archon-process';
import { PROJECT_ROOT } from '../../support/built';
import { useTempDirs } from '../../support/temp-dir';

/** Internal requirement ids and design-document numbers, which mean nothing to a user. */
const SPEC_CODE = /seed[ -]?\d|\b(?:RP|MA|MM|HITL|SEC|AU|PL|RA|TL|VR|HL|ES|LC|CK|OB|SE)-\d/i;

/** The subcommand names listed under "Commands:" in a help text (`help` itself left out). */
function subcommandsIn(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1] ?? '';
  return [...section.matchAll(/^ {2}(\w[\w-]*)/gm)].map((match) => match[1] ?? '').filter((name) => name !== 'help');
}

/** `archon --help` and every subcommand's help, recursively, through the built CLI. */
function everyHelpText(): Map<string, string> {
  const texts = new Map<string, string>();
  const visit = (path: string[]) => {
    const result = runArchon([...path, '--help']);
    expect(result.status, result.stderr).toBe(0);
    texts.set(['archon', ...path].join(' '), result.stdout);
    for (const name of subcommandsIn(result.stdout)) visit([...path, name]);
  };
  visit([]);
  return texts;
}

describe('what a newcomer reads first', () => {
  it('README.md is at most 200 lines and gives the two set-up commands within its first 15', () => {
    const lines = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8').split('\n');
    expect(lines.length).toBeLessThanOrEqual(200);
    const opening = lines.slice(0, 15).join('\n');
    expect(opening).toContain('npm install && npm start');
    expect(opening).toContain('npm install && npm test');
  });

  it('no help text of the CLI names an internal spec code', () => {
    const texts = everyHelpText();
    expect([...texts.keys()]).toEqual(expect.arrayContaining(['archon', 'archon run', 'archon audit verify', 'archon memory search', 'archon mcp list', 'archon serve']));
    const offending = [...texts].filter(([, text]) => SPEC_CODE.test(text)).map(([command, text]) => `${command}: ${text.match(SPEC_CODE)?.[0]}`);
    expect(offending).toEqual([]);
  });
});

describe('--budget-preset', () => {
  it('is named for what it is (small); the old name is still accepted but not listed', () => {
    expect(budgetPreset('small')).toBe('small');
    expect(budgetPreset('seed-004')).toBe('small');
    expect(() => budgetPreset('large')).toThrow(/Allowed choices are small/);
    expect(() => budgetPreset('constructor')).toThrow(/Allowed choices/);
    const help = runArchon(['run', '--help']).stdout;
    expect(help).toMatch(/--budget-preset <name>[\s\S]*small = 2,000 tokens a run,\s+10,000\s+a day/);
    expect(help).not.toContain('seed-004');
    const refused = runArchon(['run', 'goal', '--budget-preset', 'huge']);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('Allowed choices are small.');
  });

  describe('in a run', () => {
    const tempDir = useTempDirs();
    let server: ScriptedModelServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    it('caps the run at 2,000 tokens under its name and under the old one', async () => {
      server = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'answer' }]) : { content: 'done' }) });
      for (const name of ['small', 'seed-004']) {
        const result = await spawnArchon(['run', 'capped', '--model-url', server.url, '--data-dir', tempDir(), '--workspace', tempDir(), '--approve', 'auto', '--budget-preset', name, '--json']).done;
        expect(result.status, result.stderr).toBe(0);
        const events: RunEvent[] = result.stdout
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((line) => RunEventSchema.parse(JSON.parse(line)));
        expect(events.findLast((event) => event.type === 'budget.updated')).toMatchObject({ maxTokens: 2000 });
      }
    });
  });
});
