/**
 * The consul-template functions Nomad's `template` blocks use that need no Consul, Vault or Nomad
 * API: `env`, `file` (inside the task dir), strings, encodings, JSON, parsing, math, `loop`,
 * `timestamp`, hashes; with consul-template's argument order (the piped value last, so
 * `{{ "a,b" | split "," }}`). Consul's and Vault's functions (`key`, `service`, `secret`, ...)
 * are refused by name: berth serves no Consul or Vault data. The Nomad ones are in
 * `nomad-funcs.ts`; `writeToFile` is in the client's default denylist.
 * @module
 */
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { TemplateFuncError } from './errors.ts';
import type { FuncMap } from './funcs.ts';
import { FOREIGN_TEMPLATE_FUNCS } from '../../model/template-functions.ts';
import { consulCollectionFuncs } from './consul-collections.ts';
import { sprigFuncs } from './sprig-funcs.ts';

/**
 * Functions whose data berth does not serve (Consul's, Vault's): a job's own template text is
 * refused at parse (model/template-functions.ts); a `source` file read at render fails there.
 */
export const REFUSED_TEMPLATE_FUNCS: readonly string[] = Object.keys(FOREIGN_TEMPLATE_FUNCS);

const str = (v: unknown): string => (typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v));
const fail = (m: string): never => {
  throw new TemplateFuncError(m);
};
const numOf = (v: unknown, fn: string): number => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n)) fail(`${fn}: ${JSON.stringify(v)} is not a number`);
  return n;
};

/** What the functions read: the task's environment and its dir (the sandbox of `file`). */
export interface ConsulFuncContext {
  env: Record<string, string>;
  taskDir: string;
}

/** The function map for one task's templates. */
export function consulTemplateFuncs(ctx: ConsulFuncContext): FuncMap {
  const refused = Object.fromEntries(
    REFUSED_TEMPLATE_FUNCS.map((name) => [
      name,
      () => fail(`function "${name}" is not supported by berth (it serves no ${FOREIGN_TEMPLATE_FUNCS[name]} data)`),
    ]),
  );
  return {
    ...refused,
    ...consulCollectionFuncs(ctx.env),
    ...sprigFuncs(ctx.env),
    // In Nomad's default function_denylist; a client that allows it gets a clear refusal.
    writeToFile: () => fail('function "writeToFile" is not supported by berth (Nomad denies it by default: a template writes only its destination)'),
    env: (k) => ctx.env[str(k)] ?? process.env[str(k)] ?? '',
    file: (p) => {
      const path = resolve(ctx.taskDir, str(p));
      let real: string;
      try {
        real = realpathSync(path);
      } catch {
        return fail(`file: ${str(p)}: no such file`);
      }
      const root = realpathSync(ctx.taskDir);
      if (real !== root && !real.startsWith(root + sep)) fail(`file: ${str(p)} is outside the task dir`);
      return readFileSync(real, 'utf8');
    },
    toLower: (s) => str(s).toLowerCase(),
    toUpper: (s) => str(s).toUpperCase(),
    toTitle: (s) => str(s).replace(/(^|[^\p{L}\p{N}])(\p{L})/gu, (_m, a: string, b: string) => a + b.toUpperCase()),
    trimSpace: (s) => str(s).trim(),
    trim: (cut, s) => {
      const set = new Set([...str(cut)]);
      const chars = [...str(s)];
      let a = 0;
      let b = chars.length;
      while (a < b && set.has(chars[a]!)) a++;
      while (b > a && set.has(chars[b - 1]!)) b--;
      return chars.slice(a, b).join('');
    },
    trimPrefix: (p, s) => (str(s).startsWith(str(p)) ? str(s).slice(str(p).length) : str(s)),
    trimSuffix: (p, s) => (str(p) && str(s).endsWith(str(p)) ? str(s).slice(0, -str(p).length) : str(s)),
    split: (sepr, s) => (str(s) === '' ? [] : str(s).split(str(sepr))),
    join: (sepr, list) => (Array.isArray(list) ? list.map(str).join(str(sepr)) : fail('join: expected a list')),
    replaceAll: (from, to, s) => str(s).split(str(from)).join(str(to)),
    regexMatch: (re, s) => new RegExp(str(re)).test(str(s)),
    regexReplaceAll: (re, to, s) => str(s).replace(new RegExp(str(re), 'g'), str(to).replace(/\$\{?(\d+)\}?/g, '$$$1')),
    base64Encode: (s) => Buffer.from(str(s)).toString('base64'),
    base64Decode: (s) => Buffer.from(str(s), 'base64').toString('utf8'),
    base64URLEncode: (s) => Buffer.from(str(s)).toString('base64url'),
    base64URLDecode: (s) => Buffer.from(str(s), 'base64url').toString('utf8'),
    parseJSON: (s) => {
      try {
        return JSON.parse(str(s)) as unknown;
      } catch (e) {
        return fail(`parseJSON: ${(e as Error).message}`);
      }
    },
    parseBool: (s) => (/^(1|t|true)$/i.test(str(s)) ? true : /^(0|f|false)$/i.test(str(s)) ? false : fail(`parseBool: invalid syntax: ${JSON.stringify(s)}`)),
    parseInt: (s) => (/^[+-]?\d+$/.test(str(s).trim()) ? Number(str(s).trim()) : fail(`parseInt: invalid syntax: ${JSON.stringify(s)}`)),
    parseFloat: (s) => numOf(s, 'parseFloat'),
    timestamp: (...a) => (a.length === 0 ? new Date().toISOString().replace(/\.\d+Z$/, 'Z') : new Date().toISOString()),
    sha256Hex: (s) => createHash('sha256').update(str(s)).digest('hex'),
    md5sum: (s) => createHash('md5').update(str(s)).digest('hex'),
    loop: (a, b) => {
      const [from, to] = b === undefined ? [0, numOf(a, 'loop')] : [numOf(a, 'loop'), numOf(b, 'loop')];
      return Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
    },
    add: (a, b) => numOf(b, 'add') + numOf(a, 'add'),
    subtract: (a, b) => numOf(b, 'subtract') - numOf(a, 'subtract'),
    multiply: (a, b) => numOf(b, 'multiply') * numOf(a, 'multiply'),
    divide: (a, b) => (numOf(a, 'divide') === 0 ? fail('divide: division by zero') : Math.trunc(numOf(b, 'divide') / numOf(a, 'divide'))),
    modulo: (a, b) => (numOf(a, 'modulo') === 0 ? fail('modulo: division by zero') : numOf(b, 'modulo') % numOf(a, 'modulo')),
  };
}
