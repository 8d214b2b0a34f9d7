/**
 * consul-template's list, map and format functions, with its argument order (the piped value
 * last): `in`, `contains` over lists and strings, `containsAll`/`Any`/`None`/`NotAll`,
 * `splitToMap`, `byTag`, `byKey`, `explode`, `mergeMap`, `mergeMapWithOverride`, `minimum`,
 * `maximum`, `parseUint`, `indent`, `envOrDefault`, Go-exact `toJSON` and its forms, `toYAML`,
 * `parseYAML`, and `sockaddr` for the go-sockaddr templates Nomad jobs use.
 * @module
 */
import { networkInterfaces } from 'node:os';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { TemplateFuncError } from './errors.ts';
import type { FuncMap } from './funcs.ts';
import { goJSON } from './go-json.ts';
import { Iface, num } from './values.ts';

const fail = (m: string): never => {
  throw new TemplateFuncError(m);
};
const str = (v: unknown): string => (typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v));
const plain = (v: unknown): unknown => (v instanceof Iface ? v.v : v);
const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown, fn: string): unknown[] => {
  const p = plain(v);
  if (Array.isArray(p)) return p;
  if (p === null || p === undefined) return [];
  return fail(`${fn}: expected a list, got ${typeof p}`);
};
const same = (a: unknown, b: unknown) => plain(a) === plain(b) || (typeof plain(a) !== 'object' && str(plain(a)) === str(plain(b)));
/** consul-template's `in`: a substring of a string, or an element of a list. */
function inValue(l: unknown, v: unknown): boolean {
  const p = plain(l);
  if (typeof p === 'string') return p.includes(str(v));
  return list(p, 'in').some((e) => same(e, v));
}

/** A deep map from `Key`/`Value` pairs (`a/b/c` → `{a: {b: {c: value}}}`), as consul-template's `explode`. */
function explode(pairs: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of list(pairs, 'explode')) {
    if (!isMap(p)) return fail('explode: expected a list of key/value pairs');
    const parts = str(p.Key).split('/').filter(Boolean);
    let at = out;
    parts.forEach((k, i) => {
      if (i === parts.length - 1) at[k] = p.Value;
      else at = (isMap(at[k]) ? at[k] : (at[k] = {})) as Record<string, unknown>;
    });
  }
  return out;
}

function merge(base: unknown, over: unknown, override: boolean): Record<string, unknown> {
  const a = isMap(plain(base)) ? (plain(base) as Record<string, unknown>) : {};
  const b = isMap(plain(over)) ? (plain(over) as Record<string, unknown>) : {};
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    if (isMap(out[k]) && isMap(v)) out[k] = merge(out[k], v, override);
    else if (override || !(k in out)) out[k] = v;
  }
  return out;
}

/** The IPv4 addresses of this host, by kind, for `sockaddr`. */
function addresses(kind: 'private' | 'public' | 'all', iface?: string): string[] {
  const out: string[] = [];
  for (const [name, addrs] of Object.entries(networkInterfaces())) {
    if (iface !== undefined && name !== iface) continue;
    for (const a of addrs ?? []) {
      if (a.family !== 'IPv4' || (a.internal && iface === undefined)) continue;
      const [x, y] = a.address.split('.').map(Number) as [number, number];
      const isPrivate = x === 10 || (x === 172 && y >= 16 && y < 32) || (x === 192 && y === 168) || (x === 100 && y >= 64 && y < 128);
      if (kind === 'all' || (kind === 'private') === isPrivate) out.push(a.address);
    }
  }
  return out;
}

/** go-sockaddr's template functions Nomad jobs use; any other is refused by name. */
function sockaddr(expr: unknown): string {
  const m = /^\s*(\w+)(?:\s+"([^"]*)")?\s*$/.exec(str(expr));
  const [fn, arg] = [m?.[1], m?.[2]];
  switch (fn) {
    case 'GetPrivateIP':
      return addresses('private')[0] ?? '';
    case 'GetPrivateIPs':
      return addresses('private').join(' ');
    case 'GetPublicIP':
      return addresses('public')[0] ?? '';
    case 'GetPublicIPs':
      return addresses('public').join(' ');
    case 'GetAllInterfaces':
      return addresses('all').join(' ');
    case 'GetInterfaceIP':
      return addresses('all', arg)[0] ?? '';
    case 'GetInterfaceIPs':
      return addresses('all', arg).join(' ');
  }
  return fail(
    `sockaddr: ${JSON.stringify(str(expr))} is not supported by berth (GetPrivateIP, GetPublicIP, GetInterfaceIP "name", their plurals and GetAllInterfaces are)`,
  );
}

/** See the module doc; `env` is the task's environment. */
export function consulCollectionFuncs(env: Record<string, string>): FuncMap {
  return {
    in: (l, v) => inValue(l, v),
    contains: (v, l) => inValue(l, v),
    containsAll: (vs, l) => list(vs, 'containsAll').every((v) => inValue(l, v)),
    containsAny: (vs, l) => list(vs, 'containsAny').some((v) => inValue(l, v)),
    containsNone: (vs, l) => !list(vs, 'containsNone').some((v) => inValue(l, v)),
    containsNotAll: (vs, l) => !list(vs, 'containsNotAll').every((v) => inValue(l, v)),
    splitToMap: (sep, kvSep, s) => {
      const out: Record<string, string> = {};
      if (str(s) === '') return out;
      for (const part of str(s).split(str(sep))) {
        const i = part.indexOf(str(kvSep));
        if (i < 0) return fail(`splitToMap: ${JSON.stringify(part)} has no ${JSON.stringify(str(kvSep))}`);
        out[part.slice(0, i)] = part.slice(i + str(kvSep).length);
      }
      return out;
    },
    byTag: (services) => {
      const out: Record<string, unknown[]> = {};
      for (const s of list(services, 'byTag')) for (const t of isMap(s) && Array.isArray(s.Tags) ? s.Tags : []) (out[str(t)] ??= []).push(s);
      return out;
    },
    byKey: (pairs) => {
      const out: Record<string, Record<string, unknown>> = {};
      for (const p of list(pairs, 'byKey')) {
        if (!isMap(p)) return fail('byKey: expected a list of key/value pairs');
        const key = str(p.Key);
        const i = key.indexOf('/');
        if (i < 0) continue;
        (out[key.slice(0, i)] ??= {})[key.slice(i + 1)] = { ...p, Key: key.slice(i + 1) };
      }
      return out;
    },
    explode: (pairs) => explode(pairs),
    mergeMap: (over, base) => merge(base, over, false),
    mergeMapWithOverride: (over, base) => merge(base, over, true),
    minimum: (a, b) => Math.min(num(plain(a)), num(plain(b))),
    maximum: (a, b) => Math.max(num(plain(a)), num(plain(b))),
    parseUint: (s) => (/^\+?\d+$/.test(str(s).trim()) ? Number(str(s).trim()) : fail(`parseUint: invalid syntax: ${JSON.stringify(s)}`)),
    indent: (n, s) => {
      const pad = ' '.repeat(Math.max(0, num(plain(n))));
      return str(s)
        .split('\n')
        .map((l) => pad + l)
        .join('\n');
    },
    envOrDefault: (k, d) => env[str(k)] ?? process.env[str(k)] ?? str(d),
    toJSON: (v) => goJSON(v),
    toJSONPretty: (v) => goJSON(v, { indent: '  ' }),
    toUnescapedJSON: (v) => goJSON(v, { escapeHTML: false }),
    toUnescapedJSONPretty: (v) => goJSON(v, { indent: '  ', escapeHTML: false }),
    toYAML: (v) => stringifyYaml(plain(v) ?? null, { sortMapEntries: true, indentSeq: false }).replace(/\n$/, ''),
    parseYAML: (s) => {
      try {
        return (parseYaml(str(s)) as unknown) ?? {};
      } catch (e) {
        return fail(`parseYAML: ${(e as Error).message}`);
      }
    },
    sockaddr: (expr) => sockaddr(expr),
  };
}
