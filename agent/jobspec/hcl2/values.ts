/**
 * berth's cty-like values: JSON-shaped (string, number, bool, null, lists/tuples as arrays,
 * maps/objects as plain objects), the shape the rest of the jobspec already takes, and HCL's
 * conversions between them (number <-> string, bool <-> string, as cty's `convert` allows).
 * @module
 */
import { HclDiagnostic } from './errors.ts';

/** A value an HCL2 expression evaluates to. */
export type Value = string | number | boolean | null | Value[] | { [k: string]: Value };

/** An object or map value. */
export type ObjectValue = { [k: string]: Value };

/** Whether `v` is an object or map. */
export const isObject = (v: unknown): v is ObjectValue => typeof v === 'object' && v !== null && !Array.isArray(v);

/** cty's friendly name of a value's type, for error texts. */
export function typeName(v: Value): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'tuple';
  if (isObject(v)) return 'object';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

/** A number as cty writes it in a string: integers without a fraction, no exponent for ordinary sizes. */
export function numberText(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return n.toFixed(0);
  return String(n);
}

/** cty's string conversion, or undefined when the value has none (null, collections). */
export function asString(v: Value): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return numberText(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return undefined;
}

/** cty's number conversion: a number, or a string holding one. */
export function asNumber(v: Value): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^\s*-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/.test(v)) return Number(v);
  return undefined;
}

/** cty's bool conversion: a bool, or the strings "true" and "false". */
export function asBool(v: Value): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  return undefined;
}

/** The elements of a list, tuple or set value, or undefined. */
export const asList = (v: Value): Value[] | undefined => (Array.isArray(v) ? v : undefined);

/** An object's keys in cty's order (lexical), which is how maps and objects iterate. */
export const sortedKeys = (o: ObjectValue): string[] => Object.keys(o).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** HCL's `==`: the same type and the same value, collections element by element. */
export function equal(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]!));
  if (isObject(a) && isObject(b)) {
    const ka = sortedKeys(a);
    const kb = sortedKeys(b);
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && equal(a[k]!, b[k]!));
  }
  return false;
}

/** A value converted for a `string` place, or the HCL error saying a string is required. */
export function needString(v: Value, what: string, at?: number): string {
  const s = asString(v);
  if (s === undefined) throw new HclDiagnostic('Invalid value', `${what}: string required${v === null ? ', got null' : ''}.`, at);
  return s;
}

/** A finite number as a scaled integer: `1.25` is `[125n, 2]`; undefined when it has an exponent. */
function decimal(n: number): [bigint, number] | undefined {
  const text = String(n);
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) return undefined;
  const frac = m[3] ?? '';
  return [BigInt(`${m[1]}${m[2]}${frac}`), frac.length];
}

/** A scaled integer back to the nearest number. */
function fromDecimal(v: bigint, places: number): number {
  const neg = v < 0n;
  const digits = (neg ? -v : v).toString().padStart(places + 1, '0');
  const text = places ? `${digits.slice(0, -places)}.${digits.slice(-places)}` : digits;
  return Number(`${neg ? '-' : ''}${text}`);
}

/**
 * `+`, `-` and `*` on the decimals the numbers are written as, as cty's arbitrary-precision
 * numbers give them (`0.1 + 0.2` is `0.3`, not `0.30000000000000004`); JavaScript's arithmetic
 * where a number has no plain decimal form.
 */
export function exactArithmetic(op: '+' | '-' | '*', a: number, b: number): number {
  const x = decimal(a);
  const y = decimal(b);
  if (!x || !y) return op === '+' ? a + b : op === '-' ? a - b : a * b;
  if (op === '*') return fromDecimal(x[0] * y[0], x[1] + y[1]);
  const places = Math.max(x[1], y[1]);
  const xs = x[0] * 10n ** BigInt(places - x[1]);
  const ys = y[0] * 10n ** BigInt(places - y[1]);
  return fromDecimal(op === '+' ? xs + ys : xs - ys, places);
}
