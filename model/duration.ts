/**
 * Go-style durations, as Nomad's job files write them ("500ms", "1m30s", "2h").
 * @module
 */
import { InvalidDurationError } from './errors.ts';

const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * Parses a Go duration string into milliseconds. `""` is 0; a bare number other than "0"
 * is an error, as in Go.
 * @example parseGoDuration('1m30s') // 90000
 */
export function parseGoDuration(text: string): number {
  const s = text.trim();
  if (s === '' || s === '0') return 0;
  let rest = s;
  let sign = 1;
  if (rest[0] === '-' || rest[0] === '+') {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  const re = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
  let total = 0;
  if (rest === '') throw new InvalidDurationError(`time: invalid duration ${JSON.stringify(text)}`);
  while (rest.length > 0) {
    const m = re.exec(rest);
    if (!m) {
      if (/^\d+(\.\d*)?$/.test(rest)) throw new InvalidDurationError(`time: missing unit in duration ${JSON.stringify(text)}`);
      throw new InvalidDurationError(`time: invalid duration ${JSON.stringify(text)}`);
    }
    total += Number(m[1]) * UNITS[m[2]]!;
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}

/**
 * A duration given either as milliseconds or as a Go duration string.
 * Throws {@link InvalidDurationError} for anything else.
 */
export function toMs(value: unknown, field = 'duration'): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new InvalidDurationError(`${field}: must be a non-negative number of ms`);
    return value;
  }
  if (typeof value === 'string') {
    const ms = parseGoDuration(value);
    if (ms < 0) throw new InvalidDurationError(`${field}: must not be negative`);
    return ms;
  }
  throw new InvalidDurationError(`${field}: must be a number of ms or a duration string like "500ms"`);
}

/**
 * Renders milliseconds the way Go's `time.Duration.String` prints them ("1.5µs", "10ms",
 * "1.234567ms", "5s", "1m30s", "1h2m3s"): to the nanosecond, trailing zeros of a fraction dropped.
 */
export function formatGoDuration(ms: number): string {
  let ns = Math.round(Math.abs(ms) * 1e6);
  const sign = ms < 0 && ns > 0 ? '-' : '';
  if (ns === 0) return '0s';
  // The integer part of `n / 10^digits`, then its fraction without trailing zeros.
  const frac = (n: number, digits: number) => {
    const p = 10 ** digits;
    const f = String(n % p)
      .padStart(digits, '0')
      .replace(/0+$/, '');
    return `${Math.floor(n / p)}${f ? `.${f}` : ''}`;
  };
  if (ns < 1e3) return `${sign}${ns}ns`;
  if (ns < 1e6) return `${sign}${frac(ns, 3)}µs`;
  if (ns < 1e9) return `${sign}${frac(ns, 6)}ms`;
  const h = Math.floor(ns / 3600e9);
  ns -= h * 3600e9;
  const m = Math.floor(ns / 60e9);
  ns -= m * 60e9;
  const s = `${frac(ns, 9)}s`;
  if (h) return `${sign}${h}h${m}m${s}`;
  if (m) return `${sign}${m}m${s}`;
  return `${sign}${s}`;
}
