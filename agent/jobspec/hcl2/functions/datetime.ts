/**
 * cty's time functions: timeadd (RFC 3339 timestamp plus a Go duration, kept in the timestamp's
 * offset) and formatdate (cty's spec letters: YYYY, MM, DD, EEEE, hh, mm, ss, ZZZZZ, 'quoted' ...).
 * @module
 */
import { parseGoDuration } from '../../../../index.ts';
import { FunctionArgumentError, FunctionCallError, type FunctionTable } from './call.ts';
import { define } from './define.ts';

interface Stamp {
  /** Milliseconds since the epoch. */
  ms: number;
  /** Fraction of a second as written (digits), kept for output. */
  fraction: string;
  /** Offset from UTC in minutes. */
  offset: number;
}

function parseStamp(text: string, arg: number): Stamp {
  const m = /^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/.exec(text);
  if (!m) throw new FunctionArgumentError(arg, `not a valid RFC3339 timestamp: cannot use ${JSON.stringify(text)} as year`);
  const offset = /^[Zz]$/.test(m[8]!) ? 0 : (m[8]![0] === '-' ? -1 : 1) * (Number(m[8]!.slice(1, 3)) * 60 + Number(m[8]!.slice(4, 6)));
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0 to 99 as 1900 to 1999 (Go's zero time is year 1).
  const d = new Date(0);
  d.setUTCFullYear(+m[1]!, +m[2]! - 1, +m[3]!);
  d.setUTCHours(+m[4]!, +m[5]!, +m[6]!);
  const ms = d.getTime() - offset * 60_000;
  return { ms, fraction: m[7] ?? '', offset };
}

const p2 = (n: number) => String(n).padStart(2, '0');
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** The wall-clock fields of a stamp in its own offset. */
function fields(st: Stamp) {
  const d = new Date(st.ms + st.offset * 60_000);
  return {
    Y: d.getUTCFullYear(),
    M: d.getUTCMonth() + 1,
    D: d.getUTCDate(),
    h: d.getUTCHours(),
    m: d.getUTCMinutes(),
    s: d.getUTCSeconds(),
    wd: d.getUTCDay(),
  };
}

function offsetText(offset: number, colon: boolean, zulu: boolean): string {
  if (offset === 0 && zulu) return 'Z';
  const sign = offset < 0 ? '-' : '+';
  const a = Math.abs(offset);
  return `${sign}${p2(Math.floor(a / 60))}${colon ? ':' : ''}${p2(a % 60)}`;
}

function rfc3339(st: Stamp): string {
  const f = fields(st);
  return `${String(f.Y).padStart(4, '0')}-${p2(f.M)}-${p2(f.D)}T${p2(f.h)}:${p2(f.m)}:${p2(f.s)}${st.fraction}${offsetText(st.offset, true, true)}`;
}

function formatDate(spec: string, st: Stamp): string {
  const f = fields(st);
  let out = '';
  const re = /'((?:[^']|'')*)'|([A-Za-z])\2*|[^A-Za-z']+/g;
  for (const m of spec.matchAll(re)) {
    // Two quotes alone are one literal quote (not an empty quoted section).
    if (m[0] === "''") {
      out += "'";
      continue;
    }
    if (m[1] !== undefined) {
      out += m[1].replace(/''/g, "'");
      continue;
    }
    const tok = m[0];
    const h12 = f.h % 12 === 0 ? 12 : f.h % 12;
    const map: Record<string, string> = {
      YYYY: String(f.Y).padStart(4, '0'),
      YY: p2(f.Y % 100),
      MMMM: MONTHS[f.M - 1]!,
      MMM: MONTHS[f.M - 1]!.slice(0, 3),
      MM: p2(f.M),
      M: String(f.M),
      DD: p2(f.D),
      D: String(f.D),
      EEEE: DAYS[f.wd]!,
      EEE: DAYS[f.wd]!.slice(0, 3),
      hh: p2(f.h),
      h: String(f.h),
      HH: p2(h12),
      H: String(h12),
      AA: f.h < 12 ? 'AM' : 'PM',
      aa: f.h < 12 ? 'am' : 'pm',
      mm: p2(f.m),
      m: String(f.m),
      ss: p2(f.s),
      s: String(f.s),
      ZZZZZ: offsetText(st.offset, true, false),
      ZZZZ: offsetText(st.offset, false, false),
      ZZZ: st.offset === 0 ? 'UTC' : offsetText(st.offset, false, false),
      Z: offsetText(st.offset, true, true),
    };
    if (/^[A-Za-z]/.test(tok)) {
      const v = map[tok];
      if (v === undefined) throw new FunctionArgumentError(0, `invalid date format verb ${JSON.stringify(tok)}: unsupported format`);
      out += v;
    } else out += tok;
  }
  return out;
}

/** The time functions. */
export const DATETIME_FUNCTIONS: FunctionTable = {
  timeadd: define(['timestamp:string', 'duration:string'], ([t, d]) => {
    const st = parseStamp(t as string, 0);
    let ms: number;
    try {
      ms = parseGoDuration(d as string);
    } catch (e) {
      throw new FunctionCallError((e as Error).message);
    }
    return rfc3339({ ...st, ms: st.ms + ms });
  }),
  formatdate: define(['format:string', 'time:string'], ([spec, t]) => {
    const st = parseStamp(t as string, 1);
    return formatDate(spec as string, st);
  }),
};
