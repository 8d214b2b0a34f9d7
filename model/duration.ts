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

/** Renders milliseconds the way Go prints a duration ("10ms", "5s", "1m30s"). */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1) return `${Math.round(ms * 1e6)}ns`;
  if (ms < 1000) return `${+ms.toFixed(3)}ms`;
  let rest = ms / 1000;
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  rest -= m * 60;
  const s = `${+rest.toFixed(3)}s`;
  if (h) return `${h}h${m}m${s}`;
  if (m) return `${m}m${s}`;
  return s;
}
