/**
 * Nomad's job validation of a `periodic` block, as a pure decision: the text of the refusal of
 * a block with no cron expression, a bad expression or an unknown time zone.
 * @module
 */
import { CronSpecError, nextOfAny, timeZoneProblem } from '../periodic/cron.ts';
import { specsOf } from '../periodic/dispatcher.ts';
import type { ApiJob } from '../state/types.ts';

/** What is wrong with `apiJob`'s periodic block, in Nomad's words; undefined when nothing is (or it has none, or is a child). */
export function periodicProblem(apiJob: ApiJob, now: number): string | undefined {
  const p = apiJob.Periodic as Parameters<typeof specsOf>[0] | null | undefined;
  if (!p || apiJob.ParentID) return undefined;
  const specs = specsOf(p);
  if (specs.length === 0) return 'Invalid periodic job: must specify a cron expression (cron or crons)';
  const tz = timeZoneProblem(p.TimeZone);
  if (tz) return `Invalid periodic job: ${tz}`;
  try {
    nextOfAny(specs, now, p.TimeZone);
  } catch (e) {
    if (e instanceof CronSpecError) return `Invalid periodic job: ${e.message}`;
    throw e;
  }
  return undefined;
}
