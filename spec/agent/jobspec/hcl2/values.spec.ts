/**
 * berth's cty-like values, function by function: type names for error texts, the conversions cty's
 * `convert` allows (number and bool to and from string), HCL's `==`, lexical key order, and
 * arithmetic on the decimals numbers are written as.
 */
import { expect } from 'chai';
import { HclDiagnostic } from '../../../../agent/jobspec/hcl2/errors.ts';
import {
  asBool,
  asList,
  asNumber,
  asString,
  equal,
  exactArithmetic,
  isObject,
  needString,
  numberText,
  sortedKeys,
  typeName,
  type Value,
} from '../../../../agent/jobspec/hcl2/values.ts';

describe('hcl2: values', () => {
  it('isObject: a plain object only, not null, a list or a scalar', () => {
    const table: Array<[unknown, boolean]> = [
      [{}, true],
      [{ a: 1 }, true],
      [null, false],
      [[], false],
      ['x', false],
      [1, false],
      [undefined, false],
    ];
    expect(table.map(([v]) => isObject(v))).to.deep.equal(table.map(([, want]) => want));
  });

  it("typeName: cty's friendly names", () => {
    const table: Array<[Value, string]> = [
      [null, 'null'],
      [[1], 'tuple'],
      [[], 'tuple'],
      [{ a: 1 }, 'object'],
      [true, 'bool'],
      [false, 'bool'],
      [1.5, 'number'],
      ['', 'string'],
    ];
    expect(table.map(([v]) => typeName(v))).to.deep.equal(table.map(([, want]) => want));
  });

  it('numberText and asString: integers without a fraction or exponent, bools as words, none for null and collections', () => {
    const table: Array<[Value, string | undefined]> = [
      [0, '0'],
      [5, '5'],
      [-3, '-3'],
      [1.5, '1.5'],
      [-0.25, '-0.25'],
      [1e20, '100000000000000000000'],
      [-1e20, '-100000000000000000000'],
      [123456789012, '123456789012'],
      ['x', 'x'],
      ['', ''],
      [true, 'true'],
      [false, 'false'],
      [null, undefined],
      [[], undefined],
      [['a'], undefined],
      [{}, undefined],
    ];
    expect(table.map(([v]) => asString(v))).to.deep.equal(table.map(([, want]) => want));
    expect([7, 2.5, -1e20].map(numberText)).to.deep.equal(['7', '2.5', '-100000000000000000000']);
  });

  it('asNumber: a number, or a string that holds a whole decimal number', () => {
    const table: Array<[Value, number | undefined]> = [
      [3, 3],
      [-1.5, -1.5],
      ['12', 12],
      [' 12 ', 12],
      ['\t7\n', 7],
      ['-4', -4],
      ['1.25', 1.25],
      ['1.', 1],
      ['.5', 0.5],
      ['.25', 0.25],
      ['-.5', -0.5],
      ['1e3', 1000],
      ['1e10', 1e10],
      ['2E-2', 0.02],
      ['3e+2', 300],
      ['1.5e1', 15],
      ['', undefined],
      ['  ', undefined],
      ['+1', undefined],
      ['x1', undefined],
      ['1x', undefined],
      ['1 2', undefined],
      ['1e', undefined],
      ['.', undefined],
      ['--1', undefined],
      ['0x10', undefined],
      [true, undefined],
      [null, undefined],
      [[1], undefined],
      [{ a: 1 }, undefined],
    ];
    expect(table.map(([v]) => asNumber(v))).to.deep.equal(table.map(([, want]) => want));
  });

  it('asBool: a bool, or exactly "true" or "false"', () => {
    const table: Array<[Value, boolean | undefined]> = [
      [true, true],
      [false, false],
      ['true', true],
      ['false', false],
      ['True', undefined],
      ['FALSE', undefined],
      ['1', undefined],
      ['', undefined],
      [1, undefined],
      [0, undefined],
      [null, undefined],
      [[], undefined],
    ];
    expect(table.map(([v]) => asBool(v))).to.deep.equal(table.map(([, want]) => want));
  });

  it('asList: the array itself, undefined for anything else', () => {
    const list: Value[] = [1, 'a'];
    expect(asList(list)).to.equal(list);
    expect([asList({ a: 1 }), asList('ab'), asList(null), asList(2)]).to.deep.equal([undefined, undefined, undefined, undefined]);
  });

  it("sortedKeys: cty's lexical order (by code unit, capitals first), whatever the insertion order", () => {
    expect(sortedKeys({ b: 1, a: 2, B: 3, c: 4, aa: 5, _: 6, '10': 7, '9': 8 })).to.deep.equal(['10', '9', 'B', '_', 'a', 'aa', 'b', 'c']);
    expect(sortedKeys({ z: 1, y: 2, x: 3 })).to.deep.equal(['x', 'y', 'z']);
    expect(sortedKeys({})).to.deep.equal([]);
  });

  it("equal: HCL's ==, the same type and value, collections element by element", () => {
    const table: Array<[Value, Value, boolean]> = [
      [1, 1, true],
      ['a', 'a', true],
      [null, null, true],
      [1, '1', false],
      [true, 'true', false],
      [null, false, false],
      [[1, [2]], [1, [2]], true],
      [[1, 2], [1, 3], false],
      [[1, 2], [1], false],
      [[1], [1, 2], false],
      [[], [], true],
      [{ a: 1, b: [2] }, { b: [2], a: 1 }, true],
      [{ a: 1 }, { a: 2 }, false],
      [{ a: 1 }, { b: 1 }, false],
      [{ a: 1 }, { a: 1, b: 2 }, false],
      [{ a: 1, b: 2 }, { a: 1 }, false],
      [{}, {}, true],
      [[], {}, false],
      [{}, [], false],
      [{ a: null }, { a: null }, true],
      // A list is not the string of its letters, nor the string the list.
      [['a', 'b'], 'ab', false],
      ['ab', ['a', 'b'], false],
    ];
    expect(table.map(([a, b]) => equal(a, b))).to.deep.equal(table.map(([, , want]) => want));
  });

  it('needString: the string conversion, or "Invalid value; <what>: string required" at the offset', () => {
    expect([needString('x', 'w'), needString(2.5, 'w'), needString(false, 'w')]).to.deep.equal(['x', '2.5', 'false']);
    const failure = (v: Value, at?: number) => {
      try {
        needString(v, 'Invalid template interpolation value', at);
      } catch (e) {
        expect(e).to.be.instanceOf(HclDiagnostic);
        const d = e as HclDiagnostic;
        return { message: d.message, summary: d.summary, detail: d.detail, at: d.at };
      }
      throw new Error('needString returned');
    };
    expect(failure(null, 7)).to.deep.equal({
      message: 'Invalid value; Invalid template interpolation value: string required, got null.',
      summary: 'Invalid value',
      detail: 'Invalid template interpolation value: string required, got null.',
      at: 7,
    });
    expect(failure([1])).to.deep.equal({
      message: 'Invalid value; Invalid template interpolation value: string required.',
      summary: 'Invalid value',
      detail: 'Invalid template interpolation value: string required.',
      at: undefined,
    });
    expect(failure({}, 0).detail).to.equal('Invalid template interpolation value: string required.');
  });

  it("exactArithmetic: +, - and * on the written decimals, as cty's big numbers give them", () => {
    const table: Array<['+' | '-' | '*', number, number, number]> = [
      ['+', 0.1, 0.2, 0.3],
      ['+', 1, 2, 3],
      ['+', -0.5, 0.25, -0.25],
      ['+', 0.7, 0.1, 0.8],
      ['+', 1.005, 2, 3.005],
      ['+', 10.1, 0.2, 10.3],
      ['-', 0.3, 0.1, 0.2],
      ['-', 10, 3, 7],
      ['-', 1, 1.5, -0.5],
      ['-', -1.1, -2.2, 1.1],
      ['-', 2.5, 2.5, 0],
      ['*', 1.1, 1.1, 1.21],
      ['*', 0.05, 0.2, 0.01],
      ['*', -0.1, 3, -0.3],
      ['*', -0.5, -0.5, 0.25],
      ['*', -0.5, 0.1, -0.05],
      ['-', 0.01, 0.06, -0.05],
      ['*', 12, 3, 36],
      ['*', 0.001, 0.001, 0.000001],
      // A number with an exponent has no plain decimal form: JavaScript's arithmetic.
      ['+', 1e21, 1e21, 2e21],
      ['-', 1e21, 1, 1e21],
      ['*', 1e-7, 3, 3e-7],
      ['*', 2, 1e21, 2e21],
      ['-', 5, 1e-7, 4.9999999],
    ];
    expect(table.map(([op, a, b]) => exactArithmetic(op, a, b))).to.deep.equal(table.map(([, , , want]) => want));
  });
});
