import { describe, expect, it } from 'vitest';
import { latestOnly } from '../../../src/renderer/src/store/latest-only';

describe('latestOnly', () => {
  it('applies only the answer to the latest call: an older answer arriving last does not overwrite a newer one', async () => {
    const answers: ((value: string) => void)[] = [];
    const applied: string[] = [];
    const refresh = latestOnly(
      () => new Promise<string>((resolve) => answers.push(resolve)),
      (value) => applied.push(value),
    );
    const older = refresh();
    const newer = refresh();
    answers[1]?.('new');
    await newer;
    answers[0]?.('old');
    await older;
    expect(applied).toEqual(['new']);
  });

  it('passes the call’s arguments to the fetch and to the apply', async () => {
    const applied: [number, string][] = [];
    const load = latestOnly(
      async (id: string) => id.length,
      (length, id) => applied.push([length, id]),
    );
    await load('run-1');
    expect(applied).toEqual([[5, 'run-1']]);
  });
});
