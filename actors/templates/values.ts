/**
 * The data model: plain JS values seen as Go's `interface{}` values decoded from JSON.
 * Objects are `map[string]interface {}`, arrays `[]interface {}`, `null` is nil, strings, booleans;
 * a number is an `int` when it is an integer and a `float64` otherwise. {@link GoFloat} forces a
 * `float64` for an integral value (integral numbers of magnitude 2^53 or more are `float64` too), {@link GoByte} is a `uint8` (what `index` gives for a string).
 * @module
 */

/** A `float64` whose value happens to be integral (for instance the template constant `3.0`). */
export class GoFloat {
  constructor(
    /** The number. */
    readonly value: number,
  ) {}
}

/** A `uint8`, as Go's `index` returns when indexing a string. */
export class GoByte {
  constructor(
    /** The byte, 0..255. */
    readonly value: number,
  ) {}
}

/** A `complex128`, as a template's complex constant (`{{1+2i}}`) makes one. */
export class GoComplex {
  constructor(
    readonly re: number,
    readonly im: number,
  ) {}
}

/** Marks a value held in an `interface{}` slot (a map element, a slice element). Internal. */
export class Iface {
  constructor(readonly v: unknown) {}
}

/** The Go kind of a value as the engine sees it. */
export type Kind = 'invalid' | 'nil' | 'bool' | 'int' | 'uint' | 'float' | 'complex' | 'string' | 'slice' | 'map' | 'func' | 'iface';

/** The kind of a value. `undefined` is Go's invalid (zero) reflect.Value; `null` a nil interface. */
export function kindOf(v: unknown): Kind {
  if (v === undefined) return 'invalid';
  if (v === null) return 'nil';
  if (v instanceof Iface) return 'iface';
  if (v instanceof GoFloat) return 'float';
  if (v instanceof GoByte) return 'uint';
  if (v instanceof GoComplex) return 'complex';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(v) && Math.abs(v) < 2 ** 53 ? 'int' : 'float';
    case 'bigint':
      return 'int';
    case 'string':
      return 'string';
    case 'function':
      return 'func';
  }
  if (Array.isArray(v)) return 'slice';
  return 'map';
}

/** Go's type name of a value (`reflect.Type.String()`). */
export function typeName(v: unknown): string {
  switch (kindOf(v)) {
    case 'invalid':
    case 'nil':
      return '<nil>';
    case 'iface':
      return 'interface {}';
    case 'bool':
      return 'bool';
    case 'int':
      return 'int';
    case 'uint':
      return 'uint8';
    case 'float':
      return 'float64';
    case 'complex':
      return 'complex128';
    case 'string':
      return 'string';
    case 'slice':
      return '[]interface {}';
    case 'func':
      return 'func(...interface {}) (interface {}, error)';
    default:
      return 'map[string]interface {}';
  }
}

/** The number inside an int, uint or float value. */
export function num(v: unknown): number {
  if (v instanceof GoFloat || v instanceof GoByte) return v.value;
  return Number(v);
}

/** Removes one level of `interface{}` wrapping; a nil interface becomes `undefined` (invalid). */
export function unwrap(v: unknown): unknown {
  if (v instanceof Iface) return v.v === null ? undefined : v.v;
  return v;
}

/** Like {@link unwrap} but a nil interface becomes `null` (Go's `Interface()` of a nil interface). */
export function ifaceValue(v: unknown): unknown {
  if (v instanceof Iface) return v.v;
  return v;
}

/** Go's `isTrue` over an unwrapped value; `ok` is false for kinds with no truth. */
export function isTrue(v: unknown): { truth: boolean; ok: boolean } {
  switch (kindOf(v)) {
    case 'invalid':
      return { truth: false, ok: true };
    case 'nil':
      return { truth: false, ok: true };
    case 'iface':
      return { truth: (v as Iface).v !== null, ok: true };
    case 'bool':
      return { truth: v as boolean, ok: true };
    case 'int':
    case 'uint':
    case 'float':
      return { truth: num(v) !== 0, ok: true };
    case 'string':
      return { truth: (v as string).length > 0, ok: true };
    case 'slice':
      return { truth: (v as unknown[]).length > 0, ok: true };
    case 'func':
      return { truth: true, ok: true };
    case 'complex':
      return { truth: (v as GoComplex).re !== 0 || (v as GoComplex).im !== 0, ok: true };
    default:
      return { truth: Object.keys(v as object).length > 0, ok: true };
  }
}

/** The sorted keys of a map value (Go's fmtsort order for string keys: bytewise). */
export function sortedKeys(m: object): string[] {
  return Object.keys(m).sort((a, b) => {
    const x = Buffer.from(a),
      y = Buffer.from(b);
    return Buffer.compare(x, y);
  });
}
