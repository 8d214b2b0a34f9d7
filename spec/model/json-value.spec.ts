import { expect } from 'chai';
import { JSON_LIMITS, jsonValueProblems, type JsonLimits } from '../../model/json-value.ts';

/** Small bounds, so each bound is met with a handful of values. */
const SMALL: JsonLimits = { maxDepth: 3, maxStringLength: 10, maxValues: 6 };

/** An array whose element `i` is an accessor (getter and/or setter), which must never be called. */
function withAccessor<T extends object>(target: T, key: string | number, kind: 'get' | 'set' | 'both', calls: { n: number }): T {
  const get = () => {
    calls.n++;
    return 1;
  };
  const set = () => {
    calls.n++;
  };
  Object.defineProperty(target, key, {
    enumerable: true,
    configurable: true,
    ...(kind === 'set' ? { set } : kind === 'get' ? { get } : { get, set }),
  });
  return target;
}

describe('model: jsonValueProblems (what parseAllocation refuses before anything else)', () => {
  it('accepts plain JSON, null-prototype objects, shared (not circular) objects, and undefined object properties', () => {
    const shared = { a: 1 };
    const ok: Array<[string, unknown]> = [
      ['null', null],
      ['booleans', [true, false]],
      ['numbers', [0, -1.5, 1e300]],
      ['a string at the bound', 'x'.repeat(10)],
      ['empty array and object', [[], {}]],
      ['nested to the depth bound', [[{}]]],
      ['a null-prototype object', Object.assign(Object.create(null) as object, { a: 'b' })],
      ['the same object twice', { x: shared, y: shared }],
      ['an undefined property (JSON leaves it out)', { a: undefined, b: 1 }],
      ['a key at the bound', { ['k'.repeat(10)]: 1 }],
      ['exactly the most values', [1, 2, 3, 4, 5]],
    ];
    for (const [what, v] of ok) expect(jsonValueProblems(v, SMALL), what).to.deep.equal([]);
  });

  it('refuses what JSON cannot carry, naming the path and the kind of value', () => {
    class Point {
      x = 1;
    }
    const noCtor = Object.create(Object.create(null) as object) as object;
    const cases: Array<[string, unknown, string[]]> = [
      ['undefined at the root', undefined, ['(root): must be a JSON value (got undefined)']],
      ['undefined in an array', [1, undefined], ['[1]: must be a JSON value (got undefined)']],
      ['NaN', { a: NaN }, ['a: must be a JSON value (got NaN)']],
      ['Infinity', { a: { b: [1, -Infinity] } }, ['a.b[1]: must be a JSON value (got -Infinity)']],
      ['a BigInt', [1n], ['[0]: must be a JSON value (got a bigint)']],
      ['a function', { f: () => 1 }, ['f: must be a JSON value (got a function)']],
      ['a symbol', { s: Symbol('s') }, ['s: must be a JSON value (got a symbol)']],
      ['a Date', { when: new Date(0) }, ['when: must be a JSON value (got a Date)']],
      ['a Map', [new Map()], ['[0]: must be a JSON value (got a Map)']],
      ['a class instance', { p: new Point() }, ['p: must be a JSON value (got a Point)']],
      ['an object whose prototype has no constructor', { o: noCtor }, ['o: must be a JSON value (got an object with an unusual prototype)']],
      ['a hole in an array', [, 1], ['[0]: must be a JSON value (got undefined)']], // eslint-disable-line no-sparse-arrays
    ];
    for (const [what, v, want] of cases) expect(jsonValueProblems(v, SMALL), what).to.deep.equal(want);
  });

  it('writes paths with dotted identifiers, [index] and quoted keys (long keys cut at 40 characters)', () => {
    const long = '-'.repeat(41);
    const forty = '-'.repeat(40);
    const cases: Array<[unknown, string]> = [
      [NaN, '(root)'],
      [[NaN], '[0]'],
      [{ a: [{ b: NaN }] }, 'a[0].b'],
      [{ $_a1: { abc: NaN } }, '$_a1.abc'],
      [{ 'my-key': NaN }, '["my-key"]'],
      [{ '1a': NaN }, '["1a"]'],
      [{ 'a-': NaN }, '["a-"]'],
      [{ '-a': NaN }, '["-a"]'],
      [{ a: { 'b c': NaN } }, 'a["b c"]'],
      [{ [forty]: NaN }, `[${JSON.stringify(forty)}]`],
      [{ [long]: NaN }, `[${JSON.stringify(`${forty}...`)}]`],
    ];
    for (const [v, path] of cases)
      expect(jsonValueProblems(v, { ...SMALL, maxStringLength: 100 }), path).to.deep.equal([`${path}: must be a JSON value (got NaN)`]);
  });

  it('refuses each bound just past it, and goes no further down a refused branch', () => {
    const cases: Array<[string, unknown, string[]]> = [
      ['a long string', { s: 'x'.repeat(11) }, ['s: string longer than 10 characters']],
      ['a long key (its value is not looked at)', { a: { ['k'.repeat(11)]: NaN } }, ['a: has a key longer than 10 characters']],
      ['too deep (arrays)', [[[[]]]], ['[0][0][0]: nested deeper than 3 levels']],
      ['too deep (objects)', { a: { b: { c: { d: NaN } } } }, ['a.b.c: nested deeper than 3 levels']],
      ['too deep (mixed)', { a: [{ c: [1] }] }, ['a[0].c: nested deeper than 3 levels']],
      ['too many values', [1, 2, 3, 4, 5, 6], ['(root): has more than 6 values']],
      ['too many values, counting nested ones', { a: [1, 2], b: { c: 3, d: 4 } }, ['(root): has more than 6 values']],
    ];
    for (const [what, v, want] of cases) expect(jsonValueProblems(v, SMALL), what).to.deep.equal(want);
    expect(jsonValueProblems({ a: [{ c: [1] }] }, { ...SMALL, maxDepth: 4 }), 'a level deeper is allowed').to.deep.equal([]);
  });

  it("berth's own bounds: 64 levels, 1 Mi characters", () => {
    expect(JSON_LIMITS).to.deep.equal({ maxDepth: 64, maxStringLength: 1 << 20, maxValues: 1_000_000 });
    let deep: unknown = [];
    for (let i = 1; i < 64; i++) deep = [deep];
    expect(jsonValueProblems(deep)).to.deep.equal([]);
    const tooDeep = jsonValueProblems([deep]);
    expect(tooDeep).to.have.length(1);
    expect(tooDeep[0]).to.match(/^(\[0\]){64}: nested deeper than 64 levels$/);
    expect(jsonValueProblems('x'.repeat(1 << 20))).to.deep.equal([]);
    expect(jsonValueProblems({ s: 'x'.repeat((1 << 20) + 1) })).to.deep.equal([`s: string longer than ${1 << 20} characters`]);
  });

  it('reports a document nested 100,000 levels deep instead of overflowing the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const problems = jsonValueProblems(deep);
    expect(problems).to.have.length(1);
    expect(problems[0]).to.match(/^a(\.a){63}: nested deeper than 64 levels$/);
  });

  it('reports circular references where the cycle closes', () => {
    const o: Record<string, unknown> = { a: 1 };
    o.self = o;
    const arr: unknown[] = [1];
    arr.push({ back: arr });
    expect(jsonValueProblems(o)).to.deep.equal(['self: circular reference']);
    expect(jsonValueProblems(arr)).to.deep.equal(['[1].back: circular reference']);
  });

  it('refuses accessor properties (getter, setter or both) without calling them', () => {
    const calls = { n: 0 };
    const cases: Array<[string, unknown, string]> = [
      ['getter on an object', withAccessor({}, 'g', 'get', calls), 'g'],
      ['setter on an object', withAccessor({}, 's', 'set', calls), 's'],
      ['both on an object', { x: withAccessor({}, 'b', 'both', calls) }, 'x.b'],
      ['getter on an array', withAccessor([1, 2], 1, 'get', calls), '[1]'],
      ['setter on an array', withAccessor([1, 2], 0, 'set', calls), '[0]'],
    ];
    for (const [what, v, path] of cases) expect(jsonValueProblems(v, SMALL), what).to.deep.equal([`${path}: must be a JSON value (got an accessor property)`]);
    expect(calls.n).to.equal(0);
  });

  it('reports a value that throws when read (a proxy), and skips a property that vanishes while read', () => {
    const hostile = new Proxy(
      {},
      {
        getPrototypeOf() {
          throw new Error('no prototype for you');
        },
      },
    );
    expect(jsonValueProblems({ p: hostile })).to.deep.equal(['p: cannot be read: no prototype for you']);
    const { proxy: revoked, revoke } = Proxy.revocable([], {});
    revoke();
    expect(jsonValueProblems([revoked])[0]).to.match(/^\[0\]: cannot be read: /);

    // Listed by Object.keys, gone when its descriptor is read: nothing to check.
    let reads = 0;
    const vanishing = new Proxy(
      {},
      {
        ownKeys: () => ['a', 'b'],
        getOwnPropertyDescriptor(_t, k) {
          if (k === 'a' && reads++ > 0) return undefined;
          return { value: k === 'a' ? NaN : 2, enumerable: true, configurable: true };
        },
      },
    );
    expect(jsonValueProblems({ v: vanishing })).to.deep.equal([]);
  });

  it('stops at 20 problems, in document order', () => {
    const problems = jsonValueProblems(Array.from({ length: 25 }, () => NaN));
    expect(problems).to.have.length(20);
    expect(problems[0]).to.equal('[0]: must be a JSON value (got NaN)');
    expect(problems[19]).to.equal('[19]: must be a JSON value (got NaN)');
  });
});
