/**
 * `jsonValueProblems`: the check `parseAllocation` runs before anything else. An allocation
 * comes from JSON (servers) or from JS callers; only what JSON can carry is accepted, within
 * bounds, so the rest of berth (normalising, cloning, the state store's `JSON.stringify`, the
 * inspector) never meets a value it would choke or recurse on.
 * @module
 */
import { errorText } from './error-text.ts';

/** Bounds on an allocation's JSON. */
export interface JsonLimits {
  /** Deepest nesting of objects and arrays (the root is depth 1). */
  maxDepth: number;
  /** Longest string (keys included), in UTF-16 code units. */
  maxStringLength: number;
  /** Most values in the whole document. */
  maxValues: number;
}

/** berth's bounds: far above any real job (Nomad's own configs nest a handful of levels). */
export const JSON_LIMITS: JsonLimits = { maxDepth: 64, maxStringLength: 1 << 20, maxValues: 1_000_000 };

const MAX_REPORTED = 20;

/** `a.b[2].c` from path parts; keys that are not identifiers are quoted. */
function pathOf(parts: Array<string | number>): string {
  let out = '';
  for (const p of parts) {
    if (typeof p === 'number') out += `[${p}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(p)) out += out ? `.${p}` : p;
    else out += `[${JSON.stringify(p.length > 40 ? `${p.slice(0, 40)}...` : p)}]`;
  }
  return out || '(root)';
}

/** What a non-plain object is ("a Date"); only objects reach here, primitives are named inline. */
function describe(v: object): string {
  const name = (Object.getPrototypeOf(v) as { constructor?: { name?: string } }).constructor?.name; // never null: a null prototype is plain
  return name ? `a ${name}` : 'an object with an unusual prototype';
}

/**
 * Every reason `value` is not plain JSON within `limits`, as `path: problem` lines (the first
 * 20). Accepted: null, booleans, finite numbers, strings, arrays, and objects whose prototype is
 * `Object.prototype` or null with plain data properties; `undefined` as an object property
 * (JSON leaves it out). Refused, with the path: BigInt, functions, symbols, NaN and Infinity,
 * class instances (Date, Map, ...), accessor properties (never invoked), circular references,
 * values that throw when read (proxies), and anything past the depth, string or size bounds.
 * Iterative: a document nested 100,000 levels deep is reported, not a stack overflow.
 */
export function jsonValueProblems(value: unknown, limits: JsonLimits = JSON_LIMITS): string[] {
  const problems: string[] = [];
  const add = (parts: Array<string | number>, problem: string) => {
    if (problems.length < MAX_REPORTED) problems.push(`${pathOf(parts)}: ${problem}`);
  };
  type Frame = { v: unknown; parts: Array<string | number>; depth: number; exit?: object };
  const stack: Frame[] = [{ v: value, parts: [], depth: 1 }];
  const onPath = new Set<object>();
  let values = 0;
  while (stack.length && problems.length < MAX_REPORTED) {
    const f = stack.pop()!;
    if (f.exit) {
      onPath.delete(f.exit);
      continue;
    }
    if (++values > limits.maxValues) {
      add([], `has more than ${limits.maxValues} values`);
      break;
    }
    const v = f.v;
    switch (typeof v) {
      case 'string':
        if (v.length > limits.maxStringLength) add(f.parts, `string longer than ${limits.maxStringLength} characters`);
        continue;
      case 'boolean':
        continue;
      case 'number':
        if (!Number.isFinite(v)) add(f.parts, `must be a JSON value (got ${v})`);
        continue;
      case 'bigint':
      case 'function':
      case 'symbol':
        add(f.parts, `must be a JSON value (got a ${typeof v})`);
        continue;
      case 'undefined':
        add(f.parts, 'must be a JSON value (got undefined)');
        continue;
    }
    if (v === null) continue;
    const obj = v as object;
    if (onPath.has(obj)) {
      add(f.parts, 'circular reference');
      continue;
    }
    if (f.depth > limits.maxDepth) {
      add(f.parts, `nested deeper than ${limits.maxDepth} levels`);
      continue;
    }
    try {
      if (Array.isArray(obj)) {
        onPath.add(obj);
        stack.push({ v: undefined, parts: f.parts, depth: f.depth, exit: obj });
        for (let i = obj.length - 1; i >= 0; i--) {
          const d = Object.getOwnPropertyDescriptor(obj, i);
          if (d && (d.get || d.set)) add([...f.parts, i], 'must be a JSON value (got an accessor property)');
          else stack.push({ v: d?.value, parts: [...f.parts, i], depth: f.depth + 1 });
        }
        continue;
      }
      const proto = Object.getPrototypeOf(obj);
      if (proto !== Object.prototype && proto !== null) {
        add(f.parts, `must be a JSON value (got ${describe(obj)})`);
        continue;
      }
      onPath.add(obj);
      stack.push({ v: undefined, parts: f.parts, depth: f.depth, exit: obj });
      const keys = Object.keys(obj);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        if (k.length > limits.maxStringLength) {
          add(f.parts, `has a key longer than ${limits.maxStringLength} characters`);
          continue;
        }
        const d = Object.getOwnPropertyDescriptor(obj, k);
        if (!d) continue;
        if (d.get || d.set) add([...f.parts, k], 'must be a JSON value (got an accessor property)');
        else if (d.value !== undefined) stack.push({ v: d.value, parts: [...f.parts, k], depth: f.depth + 1 });
      }
    } catch (err) {
      add(f.parts, `cannot be read: ${errorText(err)}`);
    }
  }
  return problems;
}
