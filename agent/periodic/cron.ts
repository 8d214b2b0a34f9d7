/**
 * Nomad's cron expressions (gorhill/cronexpr, as its periodic dispatcher reads them) on
 * `cron-parser`: 5 fields (minute precision), 6 fields (a year after the day of week) and 7
 * (seconds first, a year last), the `@hourly`-style macros, in an IANA time zone. A year other than
 * `*` is refused by name (no job of ours uses one, and the parser has no year field).
 * @module
 */
import { CronExpressionParser } from 'cron-parser';

/** A cron expression Nomad's parser would refuse, or one berth cannot read. */
export class CronSpecError extends Error {
  constructor(spec: string, why: string) {
    super(`Invalid cron spec ${JSON.stringify(spec)}: ${why}`);
    this.name = 'CronSpecError';
  }
}

/** The expression as cron-parser reads it (seconds first when there are six fields). */
function translate(spec: string): string {
  const s = spec.trim();
  if (s.startsWith('@')) return s;
  const f = s.split(/\s+/);
  if (f.length === 5) return f.join(' ');
  if (f.length === 6 || f.length === 7) {
    const year = f[f.length - 1]!;
    if (year !== '*') throw new CronSpecError(spec, `a year field (${year}) is not supported by berth`);
    return (f.length === 6 ? ['0', ...f.slice(0, 5)] : f.slice(0, 6)).join(' ');
  }
  throw new CronSpecError(spec, `expected 5 to 7 fields, got ${f.length}`);
}

/** A `time_zone` no IANA zone has: Nomad's refusal. */
export function timeZoneProblem(tz: string | undefined): string | undefined {
  if (!tz) return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return undefined;
  } catch {
    return `Invalid time zone "${tz}": unknown time zone ${tz}`;
  }
}

/** The first launch strictly after `afterMs` (ms since the epoch), or undefined when there is none. */
export function nextLaunch(spec: string, afterMs: number, timeZone = 'UTC'): number | undefined {
  let expr;
  try {
    expr = CronExpressionParser.parse(translate(spec), { currentDate: new Date(afterMs), tz: timeZone || 'UTC' });
  } catch (e) {
    if (e instanceof CronSpecError) throw e;
    throw new CronSpecError(spec, e instanceof Error ? e.message : String(e));
  }
  try {
    return expr.next().getTime();
  } catch {
    return undefined;
  }
}

/** The earliest next launch of any of `specs`. */
export function nextOfAny(specs: string[], afterMs: number, timeZone?: string): number | undefined {
  let best: number | undefined;
  for (const s of specs) {
    const n = nextLaunch(s, afterMs, timeZone);
    if (n !== undefined && (best === undefined || n < best)) best = n;
  }
  return best;
}
