/**
 * Nomad's encoding and hashing functions: base64encode, base64decode, jsonencode, jsondecode,
 * yamlencode, yamldecode (with the `yaml` package), csvdecode, urlencode, md5, sha1, sha256,
 * sha512, uuidv4, uuidv5.
 * @module
 */
import { createHash } from 'node:crypto';
import { v4, v5 } from 'uuid';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { isObject, sortedKeys, type Value } from '../values.ts';
import { FunctionArgumentError, FunctionCallError, type FunctionTable } from './call.ts';
import { define } from './define.ts';

const s = (v: Value) => v as string;
const hash = (algo: string) => define(['str:string'], ([v]) => createHash(algo).update(s(v), 'utf8').digest('hex'));

/** A decoded document as a {@link Value} (dates and other YAML types as strings). */
function plain(v: unknown): Value {
  if (v === undefined || v === null) return null;
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  if (typeof v === 'bigint') return Number(v);
  return v as Value;
}

/** A value with every object's keys in cty's (lexical) order, as cty's encoders write them. */
function sorted(v: Value): Value {
  if (Array.isArray(v)) return v.map(sorted);
  if (isObject(v)) return Object.fromEntries(sortedKeys(v).map((k) => [k, sorted(v[k]!)]));
  return v;
}

/** JSON as Go's encoder writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped. */
const goJson = (v: Value) => JSON.stringify(sorted(v)).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** RFC 4180 CSV records. */
function csvRecords(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (quoted) throw new FunctionCallError('extraneous or missing " in quoted-field');
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

const NAMESPACES: Record<string, string> = {
  dns: '6ba7b810-9dad-11d1-80b4-00c04fd430c8',
  url: '6ba7b811-9dad-11d1-80b4-00c04fd430c8',
  oid: '6ba7b812-9dad-11d1-80b4-00c04fd430c8',
  x500: '6ba7b814-9dad-11d1-80b4-00c04fd430c8',
};

/** The encoding functions. */
export const ENCODING_FUNCTIONS: FunctionTable = {
  base64encode: define(['str:string'], ([v]) => Buffer.from(s(v), 'utf8').toString('base64')),
  base64decode: define(['str:string'], ([v]) => {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s(v)) || s(v).length % 4 !== 0) throw new FunctionCallError(`failed to decode base64 data ${JSON.stringify(s(v))}`);
    const out = Buffer.from(s(v), 'base64');
    const text = out.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(out)) throw new FunctionCallError('the result of decoding the provided string is not valid UTF-8');
    return text;
  }),
  jsonencode: define(['val:any:null'], ([v]) => goJson(v!)),
  jsondecode: define(['str:string'], ([v]) => {
    try {
      return plain(JSON.parse(s(v)));
    } catch (e) {
      throw new FunctionArgumentError(0, (e as Error).message);
    }
  }),
  // go-cty-yaml's style: keys and strings double-quoted, sequences not indented under their key.
  yamlencode: define(['value:any:null'], ([v]) =>
    stringifyYaml(sorted(v!), { lineWidth: 0, defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'QUOTE_DOUBLE', indentSeq: false }),
  ),
  yamldecode: define(['src:string'], ([v]) => {
    try {
      return plain(parseYaml(s(v)));
    } catch (e) {
      throw new FunctionCallError((e as Error).message.split('\n')[0]!);
    }
  }),
  csvdecode: define(['str:string'], ([v]) => {
    const [head, ...rows] = csvRecords(s(v));
    if (!head) throw new FunctionCallError('missing header line');
    return rows.map((r, i) => {
      if (r.length !== head.length) throw new FunctionCallError(`record on line ${i + 2}: wrong number of fields`);
      return Object.fromEntries(head.map((h, j) => [h, r[j]!]));
    });
  }),
  urlencode: define(['str:string'], ([v]) =>
    encodeURIComponent(s(v))
      .replace(/%20/g, '+')
      .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
  ),
  md5: hash('md5'),
  sha1: hash('sha1'),
  sha256: hash('sha256'),
  sha512: hash('sha512'),
  uuidv4: define([], () => v4()),
  uuidv5: define(['namespace:string', 'name:string'], ([ns, name]) => {
    const space = NAMESPACES[s(ns)] ?? s(ns);
    try {
      return v5(s(name), space);
    } catch {
      throw new FunctionCallError(`uuidv5() doesn't support namespace ${s(ns)}`);
    }
  }),
};
