import { CronExpressionParser } from 'cron-parser';
import { ArchonError } from '../../shared/errors';

/** The first time after `after` that `cron` (five fields, or six with seconds first; in the worker's time zone) names. */
export function nextFiring(cron: string, after: Date): Date {
  return CronExpressionParser.parse(cron, { currentDate: after }).next().toDate();
}

/**
 * A cron expression checked before it is sent anywhere: what was wrong with it, and the form it takes.
 * Each firing starts a run, so a schedule fires at most once a minute: a seconds field names one second.
 */
export function checkCron(cron: string): void {
  const fields = cron.trim().split(/\s+/).length;
  const why = cron.trim().startsWith('@') || fields === 5 || fields === 6 ? parseError(cron) : `it has ${fields} field${fields === 1 ? '' : 's'}`;
  if (why !== null) throw new ArchonError('CONFIG_INVALID', `"${cron}" is not a cron schedule Archon reads (${why}). Give five fields: minute hour day-of-month month day-of-week, e.g. "0 7 * * *" for every day at 07:00.`);
  const seconds = CronExpressionParser.parse(cron).fields.second.values.length;
  if (seconds > 1) {
    throw new ArchonError('CONFIG_INVALID', `"${cron}" fires ${seconds} times a minute, and each firing starts a run: a schedule fires at most once a minute. Give five fields (minute hour day-of-month month day-of-week), or one second as a sixth field first.`);
  }
}

function parseError(cron: string): string | null {
  try {
    CronExpressionParser.parse(cron);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}
