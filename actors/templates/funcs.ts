/**
 * Go's template builtins (`text/template/funcs.go`, Go 1.19): `and or not len index slice print
 * printf println html js urlquery call eq ne lt le gt ge`, with Go's argument rules and errors.
 * @module
 */
import { TemplateFuncError } from './errors.ts';
import { isPrint, sprint, sprintf, sprintln } from './fmt.ts';
import { GoByte, Iface, isTrue, kindOf, num, typeName, unwrap } from './values.ts';

/**
 * How an argument reaches a function: `value` is Go's `reflect.Value` (the raw value, a missing
 * one included), `any` is `interface{}`, `string` a Go `string`.
 */
export type ParamKind = 'value' | 'any' | 'string';

/** A function as the engine calls it: fixed parameters, an optional variadic tail, the body. */
export interface FuncSpec {
  /** The fixed parameters. */
  params: ParamKind[];
  /** The kind of the variadic parameter, or null. */
  variadic: ParamKind | null;
  /** The body; throws to report an error. */
  fn: (args: unknown[]) => unknown;
}

/** A user function: called with its arguments as plain values; throw an Error to fail. */
export type TemplateFunc = (...args: unknown[]) => unknown;

/** Extra functions to register, by name (Go's `template.FuncMap`). */
export type FuncMap = Record<string, TemplateFunc>;

const fail = (msg: string): never => {
  throw new TemplateFuncError(msg);
};

const truth = (v: unknown) => isTrue(unwrap(v)).truth;

/** Go's `indirect`: through interfaces; `isNil` when a nil interface is met. */
function indirect(v: unknown): [unknown, boolean] {
  if (v instanceof Iface) {
    if (v.v === null) return [v, true];
    return [v.v, false];
  }
  return [v, false];
}

function indexArg(index: unknown, cap: number): number {
  const k = kindOf(index);
  let x: number;
  if (k === 'int' || k === 'uint') x = num(index);
  else if (k === 'invalid') return fail('cannot index slice/array with nil');
  else return fail(`cannot index slice/array with type ${typeName(index)}`);
  if (x < 0 || x > cap) fail(`index out of range: ${x}`);
  return x;
}

const bytesOf = (s: string) => Buffer.from(s, 'utf8');

function index(item: unknown, ...indexes: unknown[]): unknown {
  item = unwrap(item);
  if (item === undefined) fail('index of untyped nil');
  for (let idx of indexes) {
    idx = unwrap(idx);
    let isNil: boolean;
    [item, isNil] = indirect(item);
    if (isNil) fail('index of nil pointer');
    const k = kindOf(item);
    if (k === 'slice') {
      const a = item as unknown[];
      const x = indexArg(idx, a.length);
      if (x === a.length) fail('reflect: slice index out of range');
      item = new Iface(a[x] ?? null);
    } else if (k === 'string') {
      const b = bytesOf(item as string);
      const x = indexArg(idx, b.length);
      if (x === b.length) fail('reflect: string index out of range');
      item = new GoByte(b[x]!);
    } else if (k === 'map') {
      if (idx === undefined) fail('value is nil; should be of type string');
      if (typeof idx !== 'string') fail(`value has type ${typeName(idx)}; should be string`);
      const m = item as Record<string, unknown>;
      item = new Iface(Object.hasOwn(m, idx as string) && m[idx as string] !== undefined ? m[idx as string] : null);
    } else fail(`can't index item of type ${typeName(item)}`);
  }
  return item;
}

function slice(item: unknown, ...indexes: unknown[]): unknown {
  item = unwrap(item);
  if (item === undefined) fail('slice of untyped nil');
  if (indexes.length > 3) fail(`too many slice indexes: ${indexes.length}`);
  const k = kindOf(item);
  let cap: number;
  let len: number;
  if (k === 'string') {
    if (indexes.length === 3) fail('cannot 3-index slice a string');
    cap = len = bytesOf(item as string).length;
  } else if (k === 'slice') cap = len = (item as unknown[]).length;
  else return fail(`can't slice item of type ${typeName(item)}`);
  const idx = [0, len, 0];
  indexes.forEach((index, i) => {
    idx[i] = indexArg(index, cap);
  });
  if (idx[0]! > idx[1]!) fail(`invalid slice index: ${idx[0]} > ${idx[1]}`);
  if (indexes.length === 3 && idx[1]! > idx[2]!) fail(`invalid slice index: ${idx[1]} > ${idx[2]}`);
  if (k === 'string')
    return bytesOf(item as string)
      .subarray(idx[0], idx[1])
      .toString('utf8');
  return (item as unknown[]).slice(idx[0], idx[1]);
}

function length(item: unknown): number {
  const [v, isNil] = indirect(item);
  if (isNil) fail('len of nil pointer');
  switch (kindOf(v)) {
    case 'string':
      return bytesOf(v as string).length;
    case 'slice':
      return (v as unknown[]).length;
    case 'map':
      return Object.keys(v as object).length;
    case 'invalid':
      return fail('reflect: call of reflect.Value.Type on zero Value');
  }
  return fail(`len of type ${typeName(v)}`);
}

type BasicKind = 'invalid' | 'bool' | 'int' | 'float' | 'string' | 'uint';
function basicKind(v: unknown): [BasicKind, boolean] {
  const k = kindOf(v);
  if (k === 'bool' || k === 'int' || k === 'float' || k === 'string' || k === 'uint') return [k, true];
  return ['invalid', false];
}
const ERR_BAD_TYPE = 'invalid type for comparison';
const ERR_BAD = 'incompatible types for comparison';

function isNilValue(v: unknown): boolean {
  return v === undefined || v === null;
}

function eq(arg1: unknown, ...arg2: unknown[]): boolean {
  arg1 = unwrap(arg1);
  if (arg2.length === 0) fail('missing argument for comparison');
  const [k1] = basicKind(arg1);
  for (let arg of arg2) {
    arg = unwrap(arg);
    const [k2] = basicKind(arg);
    let t = false;
    if (k1 !== k2) {
      if (k1 === 'int' && k2 === 'uint') t = num(arg1) >= 0 && num(arg1) === num(arg);
      else if (k1 === 'uint' && k2 === 'int') t = num(arg) >= 0 && num(arg1) === num(arg);
      else if (arg1 !== undefined && arg !== undefined) fail(ERR_BAD);
    } else {
      switch (k1) {
        case 'bool':
        case 'string':
          t = arg1 === arg;
          break;
        case 'int':
        case 'uint':
        case 'float':
          t = num(arg1) === num(arg);
          break;
        default: {
          const ka = kindOf(arg1),
            kb = kindOf(arg);
          if (ka !== kb && ka !== 'invalid' && kb !== 'invalid')
            fail(`non-comparable types ${sprintf('%s', [arg1])}: ${typeName(arg1)}, ${typeName(arg)}: ${sprint([arg])}`);
          if (isNilValue(arg1) || isNilValue(arg)) t = isNilValue(arg) === isNilValue(arg1);
          else fail(`non-comparable type ${sprintf('%s', [arg])}: ${typeName(arg)}`);
        }
      }
    }
    if (t) return true;
  }
  return false;
}

function lt(arg1: unknown, arg2: unknown): boolean {
  arg1 = unwrap(arg1);
  const [k1, ok1] = basicKind(arg1);
  if (!ok1) fail(ERR_BAD_TYPE);
  arg2 = unwrap(arg2);
  const [k2, ok2] = basicKind(arg2);
  if (!ok2) fail(ERR_BAD_TYPE);
  if (k1 !== k2) {
    if (k1 === 'int' && k2 === 'uint') return num(arg1) < 0 || num(arg1) < num(arg2);
    if (k1 === 'uint' && k2 === 'int') return num(arg2) >= 0 && num(arg1) < num(arg2);
    return fail(ERR_BAD);
  }
  if (k1 === 'bool') fail(ERR_BAD_TYPE);
  if (k1 === 'string') return Buffer.compare(bytesOf(arg1 as string), bytesOf(arg2 as string)) < 0;
  return num(arg1) < num(arg2);
}
const le = (a: unknown, b: unknown) => lt(a, b) || eq(a, b);

/** Go's `template.HTMLEscapeString`. */
export function htmlEscape(s: string): string {
  return s.replace(/[\0"'&<>]/g, (c) => ({ '\0': '\ufffd', '"': '&#34;', "'": '&#39;', '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);
}

/** Go's `template.JSEscapeString`. */
export function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const r = ch.codePointAt(0)!;
    switch (ch) {
      case '\\':
        out += '\\\\';
        continue;
      case "'":
        out += "\\'";
        continue;
      case '"':
        out += '\\"';
        continue;
      case '<':
        out += '\\u003C';
        continue;
      case '>':
        out += '\\u003E';
        continue;
      case '&':
        out += '\\u0026';
        continue;
      case '=':
        out += '\\u003D';
        continue;
    }
    if (r < 0x20) out += '\\u00' + r.toString(16).toUpperCase().padStart(2, '0');
    else if (r < 0x80 || isPrint(r)) out += ch;
    else out += '\\u' + r.toString(16).toUpperCase().padStart(4, '0');
  }
  return out;
}

/** Go's `url.QueryEscape`. */
export function queryEscape(s: string): string {
  let out = '';
  for (const b of bytesOf(s)) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** Go's `evalArgs` for html/js/urlquery: one string as is, else Sprint with `<no value>` for missing. */
function evalArgs(args: unknown[]): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  return sprint(args.map((a) => (a === null || a === undefined ? '<no value>' : a)));
}

function call(fn: unknown, ...args: unknown[]): unknown {
  fn = unwrap(fn);
  if (fn === undefined) fail('call of nil');
  if (typeof fn !== 'function') fail(`non-function of type ${typeName(fn)}`);
  const r = (fn as TemplateFunc)(...args.map((a) => (a instanceof Iface ? a.v : (a ?? null))));
  return new Iface(r === undefined ? null : r);
}

const V: ParamKind = 'value';
const A: ParamKind = 'any';

/** The builtin functions. */
export const BUILTINS: ReadonlyMap<string, FuncSpec> = new Map<string, FuncSpec>([
  ['and', { params: [V], variadic: V, fn: () => undefined }],
  ['or', { params: [V], variadic: V, fn: () => undefined }],
  ['call', { params: [V], variadic: V, fn: (a) => call(a[0], ...a.slice(1)) }],
  ['html', { params: [], variadic: A, fn: (a) => htmlEscape(evalArgs(a)) }],
  ['index', { params: [V], variadic: V, fn: (a) => index(a[0], ...a.slice(1)) }],
  ['slice', { params: [V], variadic: V, fn: (a) => slice(a[0], ...a.slice(1)) }],
  ['js', { params: [], variadic: A, fn: (a) => jsEscape(evalArgs(a)) }],
  ['len', { params: [V], variadic: null, fn: (a) => length(a[0]) }],
  ['not', { params: [V], variadic: null, fn: (a) => !truth(a[0]) }],
  ['print', { params: [], variadic: A, fn: (a) => sprint(a) }],
  ['printf', { params: ['string'], variadic: A, fn: (a) => sprintf(a[0] as string, a.slice(1)) }],
  ['println', { params: [], variadic: A, fn: (a) => sprintln(a) }],
  ['urlquery', { params: [], variadic: A, fn: (a) => queryEscape(evalArgs(a)) }],
  ['eq', { params: [V], variadic: V, fn: (a) => eq(a[0], ...a.slice(1)) }],
  ['ge', { params: [V, V], variadic: null, fn: (a) => !lt(a[0], a[1]) }],
  ['gt', { params: [V, V], variadic: null, fn: (a) => !le(a[0], a[1]) }],
  ['le', { params: [V, V], variadic: null, fn: (a) => le(a[0], a[1]) }],
  ['lt', { params: [V, V], variadic: null, fn: (a) => lt(a[0], a[1]) }],
  ['ne', { params: [V, V], variadic: null, fn: (a) => !eq(a[0], a[1]) }],
]);

/** Wraps a user function: variadic `interface{}` arguments, an `interface{}` result. */
export function userFunc(f: TemplateFunc): FuncSpec {
  return {
    params: [],
    variadic: 'any',
    fn: (a) => {
      const r = f(...a);
      return new Iface(r === undefined ? null : r);
    },
  };
}

/** Go's truth of a value, as `if` sees it. */
export const truthOf = truth;
