/**
 * cty's collection functions as Nomad registers them: length, keys, values, lookup, merge,
 * element, index, contains, concat, flatten, distinct, compact, coalesce, coalescelist, reverse,
 * slice, sort, range, zipmap, chunklist, setunion, setintersection, setproduct.
 * @module
 */
import { asString, equal, isObject, sortedKeys, typeName, type ObjectValue, type Value } from '../values.ts';
import { FunctionArgumentError, FunctionCallError, type FunctionTable } from './call.ts';
import { define } from './define.ts';

const list = (v: Value) => v as Value[];

/** The most elements `setproduct` builds. */
export const MAX_PRODUCT = 100_000;

/** A key equal values share (HCL's equality: same type, same value; object keys in order). */
const valueKey = (v: Value): string =>
  Array.isArray(v)
    ? `[${v.map(valueKey).join(',')}]`
    : isObject(v)
      ? `{${sortedKeys(v)
          .map((k) => `${JSON.stringify(k)}:${valueKey(v[k]!)}`)
          .join(',')}}`
      : JSON.stringify(v);

/** Unique elements, first seen first (a set's elements, as berth keeps them); linear, by key. */
function unique(xs: Value[]): Value[] {
  const seen = new Set<string>();
  return xs.filter((x) => {
    const k = valueKey(x);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** cty's set order for the set functions' results: strings and numbers sorted. */
const setOrder = (xs: Value[]) =>
  xs.every((x) => typeof x === 'number') ? [...xs].sort((a, b) => (a as number) - (b as number)) : xs.every((x) => typeof x === 'string') ? [...xs].sort() : xs;

function flatten(xs: Value[]): Value[] {
  return xs.flatMap((x) => (Array.isArray(x) ? flatten(x) : [x]));
}

/** The collection functions. */
export const COLLECTION_FUNCTIONS: FunctionTable = {
  length: define(['value:any'], ([v]) => {
    if (typeof v === 'string') return [...new Intl.Segmenter().segment(v)].length;
    if (Array.isArray(v)) return v.length;
    if (isObject(v)) return Object.keys(v).length;
    throw new FunctionArgumentError(0, 'argument must be a string, a collection type, or a structural type');
  }),
  keys: define(['inputMap:any'], ([m]) => {
    if (!isObject(m)) throw new FunctionArgumentError(0, 'must have map or object type');
    return sortedKeys(m);
  }),
  values: define(['values:any'], ([m]) => {
    if (!isObject(m)) throw new FunctionArgumentError(0, 'must have map or object type');
    return sortedKeys(m).map((k) => m[k]!);
  }),
  lookup: define(
    ['inputMap:any', 'key:string'],
    ([m, k, ...d]) => {
      if (!isObject(m)) throw new FunctionArgumentError(0, 'must have map or object type');
      if (d.length > 1) throw new FunctionCallError('lookup() takes no more than three arguments');
      if (Object.hasOwn(m, k as string)) return m[k as string]!;
      if (d.length) return d[0]!;
      throw new FunctionCallError(`lookup failed to find key ${JSON.stringify(k)}`);
    },
    'default:any',
  ),
  merge: define(
    [],
    (maps) => {
      const out: ObjectValue = {};
      maps.forEach((m, i) => {
        if (m === null) return;
        if (!isObject(m)) throw new FunctionArgumentError(i, `arguments must be maps or objects, got ${JSON.stringify(typeName(m))}`);
        Object.assign(out, m);
      });
      return out;
    },
    'maps:any:null',
  ),
  element: define(['list:list', 'index:number'], ([l, i]) => {
    const xs = list(l);
    if (xs.length === 0) throw new FunctionArgumentError(0, 'cannot use element function with an empty list');
    const n = i as number;
    if (!Number.isInteger(n)) throw new FunctionArgumentError(1, 'invalid index: value must be a whole number');
    if (n < 0) throw new FunctionArgumentError(1, 'cannot use element function with a negative index');
    return xs[n % xs.length]!;
  }),
  index: define(['list:list', 'value:any'], ([l, v]) => {
    const i = list(l).findIndex((x) => equal(x, v));
    if (i < 0) throw new FunctionCallError('item not found');
    return i;
  }),
  contains: define(['list:list', 'value:any'], ([l, v]) => list(l).some((x) => equal(x, v))),
  concat: define([], (ls) => ls.flatMap(list), 'seqs:list'),
  flatten: define(['list:list'], ([l]) => flatten(list(l))),
  distinct: define(['list:list'], ([l]) => unique(list(l))),
  compact: define(['list:list'], ([l]) =>
    list(l)
      .filter((x) => x !== null && x !== '')
      .map((x) => asString(x) ?? x),
  ),
  coalesce: define(
    [],
    (vs) => {
      for (const v of vs) if (v !== null && v !== '') return v;
      throw new FunctionCallError('no non-null, non-empty-string arguments');
    },
    'vals:any:null',
  ),
  coalescelist: define(
    [],
    (vs) => {
      vs.forEach((v, i) => {
        if (!Array.isArray(v)) throw new FunctionArgumentError(i, 'a list or tuple is required');
      });
      const hit = vs.find((v) => (v as Value[]).length > 0);
      if (!hit) throw new FunctionCallError('no non-null arguments');
      return hit;
    },
    'vals:any',
  ),
  reverse: define(['list:list'], ([l]) => [...list(l)].reverse()),
  slice: define(['list:list', 'start_index:number', 'end_index:number'], ([l, a, b]) => {
    const xs = list(l);
    const [s, e] = [a as number, b as number];
    if (s < 0) throw new FunctionArgumentError(1, 'must be greater than or equal to 0');
    if (e > xs.length) throw new FunctionArgumentError(2, 'end index must not be greater than the length of the list');
    if (s > e) throw new FunctionArgumentError(1, 'must be less than or equal to end_index');
    return xs.slice(s, e);
  }),
  sort: define(['list:list'], ([l]) =>
    list(l)
      .map((x, i) => {
        const s = asString(x);
        if (s === undefined) throw new FunctionArgumentError(0, `element ${i} is ${x === null ? 'null' : 'not a string'}`);
        return s;
      })
      .sort(),
  ),
  range: define(
    [],
    (ns) => {
      if (ns.length === 0 || ns.length > 3) throw new FunctionCallError('must have one, two, or three arguments');
      const [start, end, step] =
        ns.length === 1
          ? [0, ns[0] as number, 1]
          : [ns[0] as number, ns[1] as number, (ns[2] as number | undefined) ?? ((ns[0] as number) > (ns[1] as number) ? -1 : 1)];
      if (step === 0) throw new FunctionCallError('step must not be zero');
      if ((step > 0 && end < start) || (step < 0 && end > start))
        throw new FunctionCallError(
          'step must be ' + (step > 0 ? 'negative' : 'positive') + ' when start is ' + (step > 0 ? 'greater' : 'less') + ' than limit',
        );
      const out: number[] = [];
      for (let x = start; step > 0 ? x < end : x > end; x += step) {
        if (out.length >= 1024)
          throw new FunctionCallError('more than 1024 values were generated; either decrease the difference between start and end or use a smaller step');
        out.push(x);
      }
      return out;
    },
    'params:number',
  ),
  zipmap: define(['keys:list', 'values:list'], ([k, v]) => {
    const ks = list(k);
    const vs = list(v);
    if (ks.length !== vs.length) throw new FunctionCallError(`number of keys (${ks.length}) does not match number of values (${vs.length})`);
    return Object.fromEntries(ks.map((x, i) => [asString(x) ?? String(x), vs[i]!]));
  }),
  chunklist: define(['list:list', 'size:number'], ([l, n]) => {
    const size = n as number;
    if (size < 0) throw new FunctionArgumentError(1, 'the size argument must be positive');
    const xs = list(l);
    if (size === 0) return [xs];
    const out: Value[] = [];
    for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
    return out;
  }),
  setunion: define([], (ls) => setOrder(unique(ls.flatMap(list))), 'sets:list'),
  setintersection: define(
    ['first_set:list'],
    ([first, ...rest]) => {
      const others = rest.map((r) => new Set(list(r).map(valueKey)));
      return setOrder(unique(list(first!)).filter((x) => others.every((o) => o.has(valueKey(x)))));
    },
    'other_sets:list',
  ),
  setproduct: define(
    [],
    (ls) => {
      const sets = ls.map((l) => unique(list(l)));
      // Refused before it is built: a few ranges would otherwise ask for billions of tuples.
      if (sets.reduce((n, x) => n * x.length, 1) > MAX_PRODUCT) throw new FunctionCallError(`the product has more than ${MAX_PRODUCT} elements`);
      return sets.reduce<Value[][]>((acc, set) => acc.flatMap((p) => set.map((x) => [...p, x])), [[]]);
    },
    'sets:list',
  ),
};
