/**
 * A strict reading of JSON against Nomad's Go API structs (spec/fixtures/nomad-api-structs.ts):
 * what Go's `encoding/json` would decode into them, and stricter. Each value is checked against its
 * field's Go type, into every struct it reaches:
 *
 * - a key the struct has no field for is a problem (`unknown field`);
 * - a value of the wrong JSON type is a problem (a number for a string, a fraction for an int, a
 *   negative for a uint, a string not RFC 3339 for a `time.Time`, `null` where Go has no pointer,
 *   slice, map or interface);
 * - a field with no key is recorded as absent (the spec decides whether that is allowed: a field
 *   with `omitempty` may be absent in Nomad's answers too).
 */
import { NOMAD_API_STRUCTS } from '../fixtures/nomad-api-structs.ts';

/** One problem, at a JSON path (`Allocation.TaskStates.web.Events[0].Time`). */
export interface Problem {
  path: string;
  problem: string;
}

/** What a reading found: problems, and for each struct, the instances seen and fields absent in them. */
export interface Reading {
  problems: Problem[];
  /** Struct name -> how many instances were read. */
  seen: Map<string, number>;
  /** Struct name -> field -> a path where it was absent (first seen). */
  absent: Map<string, Map<string, string>>;
  /** Struct name -> fields present in at least one instance. */
  present: Map<string, Set<string>>;
}

/** A fresh, empty reading. */
export function newReading(): Reading {
  return { problems: [], seen: new Map(), absent: new Map(), present: new Map() };
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const INT = /^u?int(8|16|32|64)?$/;

/** The field's Go type without its ` omitempty`. */
export function goType(field: string): { type: string; omitempty: boolean } {
  return field.endsWith(' omitempty') ? { type: field.slice(0, -' omitempty'.length), omitempty: true } : { type: field, omitempty: false };
}

/** Reads `value` as the Go type `type` at `path` into `r`. */
export function readAs(r: Reading, value: unknown, type: string, path: string): void {
  const bad = (what: string): void => {
    r.problems.push({ path, problem: `${what} for ${type}, got ${JSON.stringify(value)?.slice(0, 80)}` });
  };
  if (type === 'any' || type === 'interface{}' || type === 'json.RawMessage') return;
  if (type.startsWith('*')) {
    if (value === null) return;
    return readAs(r, value, type.slice(1), path);
  }
  if (type === '[]byte') {
    if (value !== null && (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value))) bad('not base64');
    return;
  }
  if (type.startsWith('[]')) {
    if (value === null) return;
    if (!Array.isArray(value)) return bad('not an array');
    value.forEach((v, i) => readAs(r, v, type.slice(2), `${path}[${i}]`));
    return;
  }
  if (type.startsWith('map[')) {
    if (value === null) return;
    if (typeof value !== 'object' || Array.isArray(value)) return bad('not an object');
    const close = type.indexOf(']');
    const elem = type.slice(close + 1);
    for (const [k, v] of Object.entries(value)) readAs(r, v, elem, `${path}.${k}`);
    return;
  }
  switch (type) {
    case 'string':
      if (typeof value !== 'string') bad('not a string');
      return;
    case 'bool':
      if (typeof value !== 'boolean') bad('not a bool');
      return;
    case 'float32':
    case 'float64':
      if (typeof value !== 'number') bad('not a number');
      return;
    case 'time.Duration':
      if (typeof value !== 'number' || !Number.isInteger(value)) bad('not a whole number of nanoseconds');
      return;
    case 'time.Time':
      if (typeof value !== 'string' || !RFC3339.test(value)) bad('not an RFC 3339 time');
      return;
  }
  if (INT.test(type)) {
    if (typeof value !== 'number' || !Number.isInteger(value)) return bad('not a whole number');
    if (type.startsWith('u') && value < 0) return bad('negative');
    const bits = Number(/\d+$/.exec(type)?.[0] ?? 64);
    if (bits < 53) {
      const max = type.startsWith('u') ? 2 ** bits - 1 : 2 ** (bits - 1) - 1;
      if (Math.abs(value) > max) bad('out of range');
    }
    return;
  }
  const struct = NOMAD_API_STRUCTS[type];
  if (!struct) return bad(`(no such type in the fixture: ${type})`);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return bad('not an object');
  readStruct(r, value as Record<string, unknown>, type, path);
}

function readStruct(r: Reading, obj: Record<string, unknown>, name: string, path: string): void {
  const fields = NOMAD_API_STRUCTS[name]!;
  r.seen.set(name, (r.seen.get(name) ?? 0) + 1);
  const present = r.present.get(name) ?? new Set<string>();
  r.present.set(name, present);
  for (const [k, v] of Object.entries(obj)) {
    const f = fields[k];
    if (f === undefined) {
      r.problems.push({ path: `${path}.${k}`, problem: `unknown field (${name} has no ${k})` });
      continue;
    }
    present.add(k);
    readAs(r, v, goType(f).type, `${path}.${k}`);
  }
  for (const [k, f] of Object.entries(fields)) {
    if (k in obj || goType(f).omitempty) continue;
    const absent = r.absent.get(name) ?? new Map<string, string>();
    r.absent.set(name, absent);
    if (!absent.has(k)) absent.set(k, path);
  }
}
