import { describe, expect, it } from 'vitest';
import { checkCron, nextFiring } from '../../../src/core/schedule/cron';

function problemOf(cron: string): string | null {
  try {
    checkCron(cron);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('a schedule\'s cron', () => {
  it('takes five fields, a macro, or six with one second first, and names the next firing after a time', () => {
    for (const cron of ['0 7 * * *', '*/2 * * * *', '@daily', '30 15 7 * * 1-5']) expect(problemOf(cron), cron).toBeNull();
    const after = new Date(2030, 0, 1, 6, 59, 59);
    expect(nextFiring('0 7 * * *', after)).toEqual(new Date(2030, 0, 1, 7, 0, 0));
    expect(nextFiring('30 15 7 * * *', after)).toEqual(new Date(2030, 0, 1, 7, 15, 30));
  });

  it('refuses what it cannot read, saying the form it takes', () => {
    expect(problemOf('0 7 * *')).toMatch(/^"0 7 \* \*" is not a cron schedule Archon reads \(it has 4 fields\)\. Give five fields: minute hour/);
    expect(problemOf('61 7 * * *')).toMatch(/^"61 7 \* \* \*" is not a cron schedule Archon reads \(.+\)\. Give five fields/);
  });

  it('refuses one that fires more than once a minute: each firing starts a run', () => {
    expect(problemOf('*/10 * * * * *')).toBe('"*/10 * * * * *" fires 6 times a minute, and each firing starts a run: a schedule fires at most once a minute. Give five fields (minute hour day-of-month month day-of-week), or one second as a sixth field first.');
    expect(problemOf('* * * * * *')).toMatch(/fires 60 times a minute/);
    expect(problemOf('0,30 0 7 * * *')).toMatch(/fires 2 times a minute/);
  });
});
