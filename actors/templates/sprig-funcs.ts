/**
 * The sprig functions consul-template exposes as `sprig_<name>`, for the common ones: strings,
 * defaults, lists, dicts, math, encodings. sprig's argument order (the piped value last). A sprig
 * function not here is not defined, so a template naming it fails to parse with Go's
 * `function "sprig_x" not defined`; consul-template's `spew_*` debug dumps are refused by name.
 * @module
 */
import { createHash, randomUUID } from 'node:crypto';
import { TemplateFuncError } from './errors.ts';
import type { FuncMap } from './funcs.ts';
import { goJSON } from './go-json.ts';
import { Iface, isTrue, num } from './values.ts';

const fail = (m: string): never => {
  throw new TemplateFuncError(m);
};
const plain = (v: unknown): unknown => (v instanceof Iface ? v.v : v);
const str = (v: unknown): string => {
  const p = plain(v);
  return typeof p === 'string' ? p : p === null || p === undefined ? '' : typeof p === 'object' ? goJSON(p) : String(p);
};
const list = (v: unknown): unknown[] => {
  const p = plain(v);
  return Array.isArray(p) ? p : p === null || p === undefined ? [] : fail(`expected a list, got ${typeof p}`);
};
const dict = (v: unknown): Record<string, unknown> => {
  const p = plain(v);
  return typeof p === 'object' && p !== null && !Array.isArray(p) ? (p as Record<string, unknown>) : fail(`expected a dict, got ${typeof p}`);
};
/** sprig's `empty`: Go's zero values and empty collections. */
const empty = (v: unknown) => !isTrue(plain(v) ?? null).truth;
const int = (v: unknown) => Math.trunc(num(typeof plain(v) === 'string' ? Number(plain(v)) || 0 : plain(v)));

const SPRIG: FuncMap = {
  default: (d, v) => (empty(v) ? d : v),
  empty: (v) => empty(v),
  coalesce: (...vs) => vs.find((v) => !empty(v)) ?? null,
  ternary: (a, b, c) => (isTrue(plain(c)).truth ? a : b),
  trim: (s) => str(s).trim(),
  trimAll: (cut, s) => str(s).replace(new RegExp(`^[${cut}]+|[${cut}]+$`.replace(/[\]\\]/g, '\\$&'), 'g'), ''),
  trimPrefix: (p, s) => (str(s).startsWith(str(p)) ? str(s).slice(str(p).length) : str(s)),
  trimSuffix: (p, s) => (str(p) && str(s).endsWith(str(p)) ? str(s).slice(0, -str(p).length) : str(s)),
  upper: (s) => str(s).toUpperCase(),
  lower: (s) => str(s).toLowerCase(),
  title: (s) => str(s).replace(/(^|\s)(\S)/g, (_m, a: string, b: string) => a + b.toUpperCase()),
  repeat: (n, s) => str(s).repeat(Math.max(0, int(n))),
  substr: (a, b, s) => str(s).slice(int(a), int(b) < 0 ? undefined : int(b)),
  nospace: (s) => str(s).replace(/\s+/g, ''),
  trunc: (n, s) => (int(n) >= 0 ? str(s).slice(0, int(n)) : str(s).slice(int(n))),
  abbrev: (n, s) => (str(s).length <= int(n) ? str(s) : int(n) < 4 ? str(s) : str(s).slice(0, int(n) - 3) + '...'),
  contains: (sub, s) => str(s).includes(str(sub)),
  hasPrefix: (p, s) => str(s).startsWith(str(p)),
  hasSuffix: (p, s) => str(s).endsWith(str(p)),
  quote: (...vs) => vs.map((v) => JSON.stringify(str(v))).join(' '),
  squote: (...vs) => vs.map((v) => `'${str(v)}'`).join(' '),
  cat: (...vs) =>
    vs
      .filter((v) => plain(v) !== null && plain(v) !== undefined)
      .map(str)
      .join(' '),
  indent: (n, s) =>
    str(s)
      .split('\n')
      .map((l) => ' '.repeat(int(n)) + l)
      .join('\n'),
  nindent: (n, s) =>
    '\n' +
    str(s)
      .split('\n')
      .map((l) => ' '.repeat(int(n)) + l)
      .join('\n'),
  replace: (from, to, s) => str(s).split(str(from)).join(str(to)),
  plural: (one, many, n) => (int(n) === 1 ? one : many),
  wrap: (n, s) =>
    str(s)
      .replace(new RegExp(`(.{1,${Math.max(1, int(n))}})(\\s+|$)`, 'g'), '$1\n')
      .replace(/\n$/, ''),
  split: (sep, s) =>
    Object.fromEntries(
      str(s)
        .split(str(sep))
        .map((p, i) => [`_${i}`, p]),
    ),
  splitList: (sep, s) => str(s).split(str(sep)),
  join: (sep, l) => list(l).map(str).join(str(sep)),
  sortAlpha: (l) => list(l).map(str).sort(),
  list: (...vs) => vs,
  first: (l) => list(l)[0] ?? null,
  last: (l) => list(l).at(-1) ?? null,
  rest: (l) => list(l).slice(1),
  initial: (l) => list(l).slice(0, -1),
  append: (l, v) => [...list(l), v],
  prepend: (l, v) => [v, ...list(l)],
  concat: (...ls) => ls.flatMap(list),
  reverse: (l) => [...list(l)].reverse(),
  uniq: (l) => list(l).filter((v, i, a) => a.findIndex((w) => goJSON(w) === goJSON(v)) === i),
  compact: (l) => list(l).filter((v) => !empty(v)),
  has: (v, l) => list(l).some((w) => goJSON(w) === goJSON(v)),
  without: (l, ...vs) => list(l).filter((w) => !vs.some((v) => goJSON(w) === goJSON(v))),
  dict: (...kv) => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < kv.length; i += 2) out[str(kv[i])] = kv[i + 1] ?? '';
    return out;
  },
  get: (d, k) => dict(d)[str(k)] ?? '',
  set: (d, k, v) => Object.assign(dict(d), { [str(k)]: v }),
  unset: (d, k) => {
    const out = dict(d);
    delete out[str(k)];
    return out;
  },
  hasKey: (d, k) => Object.hasOwn(dict(d), str(k)),
  keys: (...ds) => ds.flatMap((d) => Object.keys(dict(d))),
  values: (d) => Object.values(dict(d)),
  pick: (d, ...ks) => Object.fromEntries(Object.entries(dict(d)).filter(([k]) => ks.map(str).includes(k))),
  omit: (d, ...ks) => Object.fromEntries(Object.entries(dict(d)).filter(([k]) => !ks.map(str).includes(k))),
  merge: (dst, ...srcs) => {
    const out = dict(dst);
    for (const s of srcs) for (const [k, v] of Object.entries(dict(s))) if (!(k in out)) out[k] = v;
    return out;
  },
  toJson: (v) => goJSON(v),
  toPrettyJson: (v) => goJSON(v, { indent: '  ' }),
  toRawJson: (v) => goJSON(v, { escapeHTML: false }),
  fromJson: (s) => {
    try {
      return JSON.parse(str(s)) as unknown;
    } catch {
      return '';
    }
  },
  b64enc: (s) => Buffer.from(str(s)).toString('base64'),
  b64dec: (s) => Buffer.from(str(s), 'base64').toString('utf8'),
  sha1sum: (s) => createHash('sha1').update(str(s)).digest('hex'),
  sha256sum: (s) => createHash('sha256').update(str(s)).digest('hex'),
  add: (...vs) => vs.reduce<number>((a, v) => a + int(v), 0),
  add1: (v) => int(v) + 1,
  sub: (a, b) => int(a) - int(b),
  mul: (...vs) => vs.reduce<number>((a, v) => a * int(v), 1),
  div: (a, b) => (int(b) === 0 ? fail('sprig_div: division by zero') : Math.trunc(int(a) / int(b))),
  mod: (a, b) => (int(b) === 0 ? fail('sprig_mod: division by zero') : int(a) % int(b)),
  max: (...vs) => Math.max(...vs.map(int)),
  min: (...vs) => Math.min(...vs.map(int)),
  until: (n) => Array.from({ length: Math.max(0, int(n)) }, (_, i) => i),
  atoi: (s) => int(s),
  int: (v) => int(v),
  toString: (v: unknown) => str(v),
  toStrings: (l) => list(l).map((v) => str(v)),
  uuidv4: () => randomUUID(),
};

/** The `sprig_*` functions, and consul-template's `spew_*` refused by name. */
export function sprigFuncs(env: Record<string, string>): FuncMap {
  const out: FuncMap = Object.fromEntries(Object.entries(SPRIG).map(([k, f]) => [`sprig_${k}`, f]));
  out.sprig_env = (k) => env[str(k)] ?? process.env[str(k)] ?? '';
  for (const name of ['spew_dump', 'spew_printf', 'spew_sdump', 'spew_sprintf'])
    out[name] = () => fail(`function "${name}" is not supported by berth (a debug dump of Go values)`);
  return out;
}
