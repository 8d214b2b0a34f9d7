/**
 * Flattening as Nomad's `flatmap.Flatten` does it, over the API JSON instead of Go structs.
 *
 * Nomad diffs its server structs, so a field the API JSON leaves out is the struct's zero value
 * (`"false"`, `"0"`, `""`), pointers and slices inside a struct are skipped ("primitive only"),
 * and `map[string]string` fields are kept as `Meta[foo]`. A {@link Schema} lists one struct's
 * primitive fields with their Go kind; {@link flatStruct} reads the JSON through it.
 * {@link flatAny} is the other mode (everything, for `Config` and other free-form maps):
 * `args[0]`, `labels[0][team]`, `nil` for JSON null, numbers as Go prints a float64 (`1e+06`).
 * @module
 */

/** A flattened object: field path to value as Go's `%v` prints it. */
export type Flat = Map<string, string>;

/** Go kinds of primitive struct fields: string, integer (durations are ns integers), bool, `map[string]string`. */
export type Kind = 's' | 'i' | 'b' | 'm';

/** One Nomad struct's primitive fields (those `Flatten(obj, nil, true)` keeps), by API JSON name. */
export type Schema = Readonly<Record<string, Kind>>;

export type Obj = Record<string, unknown>;

/** An object (not an array, not null), or undefined. */
export function asObj(v: unknown): Obj | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
}

/** An array's elements (JSON null or a missing list is empty). */
export function asList(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** An array of strings (other elements printed as Go would). */
export function asStrings(v: unknown): string[] {
  return asList(v).map((x) => (typeof x === 'string' ? x : goValue(x)));
}

/** A number as Go's `%v` prints a float64: shortest digits, an exponent from 1e+06 and below 1e-04. */
export function goFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [mantissa, e] = n.toExponential().split('e') as [string, string];
  const exp = Number(e);
  if (exp >= -4 && exp < 6) return String(n);
  const digits = String(Math.abs(exp)).padStart(2, '0');
  return `${mantissa}e${exp < 0 ? '-' : '+'}${digits}`;
}

/** A scalar as Go prints the struct field it decodes into (integers plain, others via {@link goFloat}). */
function goValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 1e21 ? String(v) : goFloat(v);
  if (v === null || v === undefined) return '';
  return JSON.stringify(v);
}

/**
 * `Flatten(obj, filter, true)` of a struct whose JSON is `obj`: every field of `schema`, the
 * struct's zero value when the JSON lacks it; undefined for a nil object.
 */
export function flatStruct(obj: unknown, schema: Schema, filter: readonly string[] = []): Flat | undefined {
  const o = asObj(obj);
  if (!o) return obj === undefined || obj === null ? undefined : new Map();
  const out: Flat = new Map();
  for (const [name, kind] of Object.entries(schema)) {
    const v = o[name];
    if (kind === 'm') {
      for (const [k, x] of Object.entries(asObj(v) ?? {})) out.set(`${name}[${k}]`, goValue(x));
    } else if (kind === 'b') out.set(name, v === true ? 'true' : 'false');
    else if (kind === 'i') out.set(name, typeof v === 'number' ? goValue(v) : '0');
    else out.set(name, typeof v === 'string' ? v : v === undefined || v === null ? '' : goValue(v));
  }
  for (const f of filter) out.delete(f);
  return out;
}

/** `Flatten(v, nil, false)` of free-form JSON (a `map[string]any` decoded from JSON): every leaf. */
export function flatAny(v: unknown): Flat | undefined {
  if (v === undefined || v === null) return undefined;
  const out: Flat = new Map();
  const walk = (prefix: string, x: unknown) => {
    if (x === null || x === undefined) out.set(prefix, 'nil');
    else if (Array.isArray(x)) x.forEach((el, i) => walk(`${prefix}[${i}]`, el));
    else if (typeof x === 'object') for (const [k, el] of Object.entries(x as Obj)) walk(prefix ? `${prefix}[${k}]` : k, el);
    else out.set(prefix, typeof x === 'number' ? goFloat(x) : goValue(x));
  };
  walk('', v);
  return out;
}

/** Go's byte-wise string order (the same as JavaScript's for the ASCII names a job has). */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** JSON without the keys whose value is null, so an absent field and a null one compare equal. */
function pruned(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(pruned);
  const o = asObj(v);
  if (!o) return v;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== null && o[k] !== undefined)
    .sort(cmp);
  return Object.fromEntries(keys.map((k) => [k, pruned(o[k])]));
}

/** A stable text of a JSON value, keys sorted and nulls dropped: a set key, and the test of {@link deepEqual}. */
export function canonical(v: unknown): string {
  return JSON.stringify(pruned(v)) ?? 'null';
}

/** `reflect.DeepEqual` of the structs two JSON values decode into (null and absent alike). */
export function deepEqual(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}
