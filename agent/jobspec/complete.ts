/**
 * A job as Nomad's servers write one: every field of Nomad's API `Job` (and of each struct in it)
 * present, the ones nobody set at Go's zero value: `null` for a pointer, slice, map or interface,
 * `""`, `0`, `false`, Nomad's zero time, a zero struct. What a job file leaves out is thus in the
 * job berth registers and serves, as it is in the JSON a Go client sends and a Nomad server
 * returns; a tool that decodes it strictly finds each field where Nomad's have it. Fields with
 * `omitempty` stay out when unset (Go leaves them out too). Keys the structs do not know (a
 * driver's `Config`, `Meta`) are kept as they are. Pure.
 *
 * ```
 * completeApiJob({ ID: 'web', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't' }] }] })
 * // { Region: null, Namespace: null, ID: 'web', ..., TaskGroups: [{ Name: 'g', Count: null, ...,
 * //   Tasks: [{ Name: 't', Driver: '', User: '', Lifecycle: null, ... }] }], ... }
 * ```
 * @module
 */
import { API_JOB_STRUCTS } from './api-job-structs.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Nomad's zero `time.Time` as JSON. */
const ZERO_TIME = '0001-01-01T00:00:00Z';

/** Go's zero value of `type`, as encoding/json writes it. */
function zero(type: string): unknown {
  if (type.startsWith('*') || type.startsWith('[]') || type.startsWith('map[') || type === 'any' || type === 'interface{}') return null;
  if (type === 'string') return '';
  if (type === 'bool') return false;
  if (type === 'time.Time') return ZERO_TIME;
  if (/^(u?int(8|16|32|64)?|float(32|64)|time\.Duration)$/.test(type)) return 0;
  if (API_JOB_STRUCTS[type]) return complete({}, type);
  return null;
}

/** `value` read as `type`, its structs completed (a copy; `value` is not changed). */
function walk(value: unknown, type: string): unknown {
  if (value === null || value === undefined) return value;
  if (type.startsWith('*')) return walk(value, type.slice(1));
  if (type.startsWith('[]')) return Array.isArray(value) ? value.map((v) => walk(v, type.slice(2))) : value;
  if (type.startsWith('map[')) {
    if (!isObj(value)) return value;
    const elem = type.slice(type.indexOf(']') + 1);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, elem)]));
  }
  return API_JOB_STRUCTS[type] && isObj(value) ? complete(value, type) : value;
}

function complete(obj: Obj, struct: string): Obj {
  const fields = API_JOB_STRUCTS[struct]!;
  const out: Obj = {};
  for (const [name, spec] of Object.entries(fields)) {
    const omitempty = spec.endsWith(' omitempty');
    const type = omitempty ? spec.slice(0, -' omitempty'.length) : spec;
    if (name in obj) out[name] = walk(obj[name], type);
    else if (!omitempty) out[name] = zero(type);
  }
  // What the structs do not name stays (berth's own additions are the caller's to drop).
  for (const [k, v] of Object.entries(obj)) if (!(k in out)) out[k] = v;
  return out;
}

/** `job` with every field of Nomad's API `Job` (see the module doc). */
export function completeApiJob<T extends Obj>(job: T): T {
  return complete(job, 'Job') as T;
}
