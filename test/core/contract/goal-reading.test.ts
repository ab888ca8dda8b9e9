import { describe, expect, it } from 'vitest';
import { jsonAnswer, numberAnswer } from '../../../src/core/contract/answer-format';
import { answerFormat, commandClaims, commandsToPass, constraintsIn, workspacePath, writtenFiles } from '../../../src/core/contract/goal-reading';
import { contractFromGoal } from '../../../src/core/contract/perceiver';

describe('what the words of a goal or a claim say', () => {
  it.each([
    ['Write NOTES.md summarising README.md.', ['NOTES.md']],
    ['Create CHANGELOG.md and SUMMARY.md from the git log.', ['CHANGELOG.md', 'SUMMARY.md']],
    ['Read input.txt and write its word count to count.txt', ['count.txt']],
    ['Summarize the notes in notes.txt into summary.md', ['summary.md']],
    ['Fix the bug in parser.ts', []],
    ['Write a Node.js script hello.js that prints hi. Do not modify package.json.', ['hello.js']],
    ['Read the data from the local copy data.csv', []],
    ['Compare a.txt to b.txt', []],
    ['I wrote NOTES.md with the summary.', ['NOTES.md']],
    ['NOTES.md has been created.', ['NOTES.md']],
    ['I could not write NOTES.md because of an error.', []],
    ['Saved the report to `out/report.txt`.', ['out/report.txt']],
    ['The value is 3.14, from version v1.2.3 of lib.so', []],
    ["Don't touch config.yaml. Create report.txt", ['report.txt']],
    ["I didn't modify README.md.", []],
    ["I won't write to out.md", []],
    ['Make sure config.yaml is not changed', []],
    ['Inspect main.py, which was modified yesterday', []],
    ['No changes were made to package.json.', []],
    ['Check that package.json was updated', []],
    ['Rename old.txt to new.txt', ['new.txt']],
    ['Copy a.txt to b.txt', ['b.txt']],
    ['Move notes.txt into archive/notes.txt', ['archive/notes.txt']],
    ['Write tests for foo.ts', []],
    ['Created a backup; the original data.csv is unchanged', []],
    ['Write the notes to `my notes.md`', ['my notes.md']],
    ['Write ../outside.txt and /tmp/abs.txt and ./a/./b.md', ['a/b.md']],
  ])('%s → files written %j', (text, files) => {
    expect(writtenFiles(text)).toEqual(files);
  });

  it('reads the commands a goal says must pass, only in backticks; asking whether one passes requires nothing', () => {
    expect(commandsToPass('Fix the bug and make sure `npm test` passes')).toEqual(['npm test']);
    expect(commandsToPass('Report whether `cargo build` passes')).toEqual([]);
    expect(commandsToPass('Run `npm test` and list the failures')).toEqual([]);
    expect(commandsToPass('Look at `package.json` and npm test passes')).toEqual([]);
  });

  it('reads what a result claims of commands: in the past, ran or passed; advice and denials claim nothing', () => {
    expect(commandClaims('I ran `make check` and it passed.')).toEqual([{ command: 'make check', passed: true }]);
    expect(commandClaims('I ran `npm test` and 2 tests failed.')).toEqual([{ command: 'npm test', passed: false }]);
    expect(commandClaims('`npm test` passed.')).toEqual([{ command: 'npm test', passed: true }]);
    expect(commandClaims('You can run `npm test` to check. To deploy, run `npm run deploy`.')).toEqual([]);
    expect(commandClaims('Running `npm test` would verify this, but I did not run it.')).toEqual([]);
    expect(commandClaims("I didn't run `npm test`.")).toEqual([]);
  });

  it('keeps paths inside the workspace, normalised', () => {
    expect(workspacePath('a\\b\\c.txt')).toBe('a/b/c.txt');
    expect(workspacePath('./x/../y.md')).toBe('y.md');
    expect(workspacePath('../out.txt')).toBeNull();
    expect(workspacePath('/etc/passwd')).toBeNull();
    expect(workspacePath('C:\\Users\\me\\f.txt')).toBeNull();
  });

  it('reads the form an answer is asked in, and the constraints', () => {
    expect(answerFormat('How many lines does data.csv have? Answer with just the number.')).toBe('number');
    expect(answerFormat('Reply with the number only')).toBe('number');
    expect(answerFormat('List the files and return them as JSON.')).toBe('json');
    expect(answerFormat('How many lines, and why?')).toBeNull();
    expect(answerFormat('Answer with the number of lines and explain how you counted')).toBeNull();
    expect(constraintsIn('Write hello.js. Do not modify package.json, and keep it short.')).toEqual(['Do not modify package.json']);
  });

  it('a goal becomes a contract of numbered criteria with their source', () => {
    expect(contractFromGoal('Write CHANGELOG.md, make sure `npm test` passes, and answer with just the number of fixes.')).toEqual({
      goal: 'Write CHANGELOG.md, make sure `npm test` passes, and answer with just the number of fixes.',
      criteria: [
        { id: 'c1', kind: 'file_written', path: 'CHANGELOG.md', text: 'CHANGELOG.md is written', source: 'goal' },
        { id: 'c2', kind: 'command_succeeds', command: 'npm test', text: '`npm test` runs and exits 0', source: 'goal' },
        { id: 'c3', kind: 'answer_format', format: 'number', text: 'the answer is one number', source: 'goal' },
      ],
      deliverables: ['CHANGELOG.md'],
      constraints: [],
      outOfScope: [],
    });
  });
});

describe('answer forms, by parsing', () => {
  it.each([
    ['42', true],
    ['**42**', true],
    ['There are 42 lines.', true],
    ['The answer: 1,234.', true],
    ['12 * 7 = 84', true],
    ['There are 42 lines and 3 columns.', false],
    ['none', false],
  ])('%j is one number: %s', (text, holds) => {
    expect(numberAnswer(text).holds).toBe(holds);
  });

  it('says which numbers a prose answer holds', () => {
    expect(numberAnswer('There are 42 lines and 3 columns.')).toEqual({ holds: false, detail: 'The answer must be one number, and it holds 2 (42, 3): give only the number that answers.' });
  });

  it('JSON must parse as an object or array', () => {
    expect(jsonAnswer('```json\n{"a": 1}\n```').holds).toBe(true);
    expect(jsonAnswer('{a: 1, b: }}').holds).toBe(false);
    expect(jsonAnswer('no json here').holds).toBe(false);
  });
});
