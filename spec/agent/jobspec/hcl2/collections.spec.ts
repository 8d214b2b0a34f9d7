/**
 * The collection functions and the call rules (arity, `...`, argument conversion, `try` and
 * `can`), case by case through the evaluator: each result whole, each error in HashiCorp's words.
 */
import { expect } from 'chai';
import type { Value } from '../../../../agent/jobspec/hcl2/values.ts';
import { HclDiagnostic } from '../../../../agent/jobspec/hcl2/errors.ts';
import { functionCalls, invalidArgument, callFailed } from './function-calls.ts';

const { ev, fails } = functionCalls([['n', 3]]);

const invalid = invalidArgument;
const failed = callFailed;

describe('hcl2: collection functions', () => {
  const results: Array<[string, Value]> = [
    ['${length("")}', 0],
    ['${length([])}', 0],
    ['${length({})}', 0],
    ['${length("👍🏽é")}', 2],
    ['${keys({})}', []],
    ['${values({b = [2], a = 1})}', [1, [2]]],
    ['${lookup({a = 1}, "a")}', 1],
    ['${lookup({a = 1}, "b", "d")}', 'd'],
    ['${merge()}', {}],
    ['${merge(null, {a = 1}, null)}', { a: 1 }],
    ['${element([1, 2, 3], 3)}', 1],
    ['${element([1, 2], 1)}', 2],
    ['${element([1, 2], 0)}', 1],
    ['${index(["a", "b"], "a")}', 0],
    [
      '${distinct([[1, 11], [11, 1]])}',
      [
        [1, 11],
        [11, 1],
      ],
    ],
    ['${compact(["a", 1])}', ['a', '1']],
    ['${range(1, 3)}', [1, 2]],
    ['${range(2, 2, -1)}', []],
    ['${length(setproduct(range(1000), range(100)))}', 100000],
    ['${index(["a", "b"], "b")}', 1],
    ['${contains([[1]], [1])}', true],
    ['${contains([1], "1")}', false],
    ['${concat()}', []],
    ['${concat([], [1], [[2]])}', [1, [2]]],
    ['${flatten([[], [[]]])}', []],
    ['${distinct([[1], [1], [2], [1]])}', [[1], [2]]],
    ['${distinct([{a = 1}, {a = 1}, {a = 2}])}', [{ a: 1 }, { a: 2 }]],
    ['${compact(["a", "", null, "b"])}', ['a', 'b']],
    ['${coalescelist([], [1], [2])}', [1]],
    ['${reverse([])}', []],
    ['${slice([1, 2, 3], 0, 0)}', []],
    ['${slice([1, 2, 3], 1, 3)}', [2, 3]],
    ['${slice([1, 2], 2, 2)}', []],
    ['${sort(["b", "a", "B"])}', ['B', 'a', 'b']],
    ['${sort([2, 10])}', ['10', '2']],
    ['${range(0)}', []],
    ['${range(3, 0)}', [3, 2, 1]],
    ['${range(1, 2, 0.5)}', [1, 1.5]],
    ['${range(5, 1, -2)}', [5, 3]],
    ['${range(2, 2)}', []],
    ['${length(range(1024))}', 1024],
    ['${zipmap([], [])}', {}],
    ['${zipmap(["a", "a"], [1, 2])}', { a: 2 }],
    ['${zipmap([1], ["x"])}', { 1: 'x' }],
    ['${chunklist([1, 2, 3], 2)}', [[1, 2], [3]]],
    ['${chunklist([1, 2], 0)}', [[1, 2]]],
    ['${chunklist([], 2)}', []],
    ['${setunion([2, 1], [3, 1])}', [1, 2, 3]],
    ['${setunion(["b", "a"], ["c"])}', ['a', 'b', 'c']],
    ['${setintersection(["c", "a", "b"], ["b", "c"], ["c", "b", "x"])}', ['b', 'c']],
    ['${setintersection([3, 1, 3])}', [1, 3]],
    [
      '${setproduct(["a", "b"], [1])}',
      [
        ['a', 1],
        ['b', 1],
      ],
    ],
    ['${setproduct([1], [])}', []],
  ];
  for (const [text, want] of results)
    it(text, () => {
      expect(ev(text)).to.deep.equal(want);
    });

  it("errors in HashiCorp's words", () => {
    const cases: Array<[string, string]> = [
      ['${length(5)}', invalid('value', 'argument must be a string, a collection type, or a structural type')],
      ['${keys([1])}', invalid('inputMap', 'must have map or object type')],
      ['${values("x")}', invalid('values', 'must have map or object type')],
      ['${lookup([1], "a")}', invalid('inputMap', 'must have map or object type')],
      ['${lookup({a = 1}, "a", 1, 2)}', failed('lookup', 'lookup() takes no more than three arguments')],
      ['${lookup({a = 1}, "b")}', failed('lookup', 'lookup failed to find key "b"')],
      ['${merge({a = 1}, [1])}', invalid('maps', 'arguments must be maps or objects, got "tuple"')],
      ['${element([1], 1.5)}', invalid('index', 'invalid index: value must be a whole number')],
      ['${element([1], -1)}', invalid('index', 'cannot use element function with a negative index')],
      ['${index([1], 2)}', failed('index', 'item not found')],
      ['${coalesce(null, "")}', failed('coalesce', 'no non-null, non-empty-string arguments')],
      ['${coalescelist([], 1)}', invalid('vals', 'a list or tuple is required')],
      ['${coalescelist([], [])}', failed('coalescelist', 'no non-null arguments')],
      ['${slice([1], -1, 1)}', invalid('start_index', 'must be greater than or equal to 0')],
      ['${slice([1], 0, 2)}', invalid('end_index', 'end index must not be greater than the length of the list')],
      ['${slice([1, 2], 2, 1)}', invalid('start_index', 'must be less than or equal to end_index')],
      ['${sort(["a", null])}', invalid('list', 'element 1 is null')],
      ['${sort([[1]])}', invalid('list', 'element 0 is not a string')],
      ['${range()}', failed('range', 'must have one, two, or three arguments')],
      ['${range(1, 2, 3, 4)}', failed('range', 'must have one, two, or three arguments')],
      ['${range(1, 2, 0)}', failed('range', 'step must not be zero')],
      ['${range(1, 5, -1)}', failed('range', 'step must be positive when start is less than limit')],
      ['${range(5, 1, 1)}', failed('range', 'step must be negative when start is greater than limit')],
      ['${range(1025)}', failed('range', 'more than 1024 values were generated; either decrease the difference between start and end or use a smaller step')],
      ['${zipmap(["a"], [])}', failed('zipmap', 'number of keys (1) does not match number of values (0)')],
      ['${chunklist([1], -1)}', invalid('size', 'the size argument must be positive')],
      ['${setproduct(range(1000), range(101))}', failed('setproduct', 'the product has more than 100000 elements')],
    ];
    expect(cases.map(([text]) => fails(text))).to.deep.equal(cases.map(([, want]) => want));
  });
});

describe('hcl2: calling a function', () => {
  it('arguments converted to the parameter types, or refused naming the parameter', () => {
    expect(ev('${upper(5)}${abs("-2")}${max("3", 1)}')).to.equal('523');
    const cases: Array<[string, string]> = [
      ['${upper(null)}', invalid('str', 'argument must not be null')],
      ['${abs("x")}', invalid('num', 'a number is required')],
      ['${abs([1])}', invalid('num', 'number required')],
      ['${keys(null)}', invalid('inputMap', 'must have map or object type')],
      ['${max(1, "x")}', invalid('numbers', 'a number is required')],
      ['${concat([1], 2)}', invalid('seqs', 'list of any single type required')],
      ['${max(1...)}', 'Invalid expanding argument value; The expanding argument (indicated by ...) must be of a tuple, list, or set type.'],
      ['${upper()}', 'Not enough function arguments; Function "upper" expects 1 argument(s). Missing value for "str".'],
      ['${upper([]...)}', 'Not enough function arguments; Function "upper" expects 1 argument(s). Missing value for "str".'],
      ['${upper(["a", "b"]...)}', 'Too many function arguments; Function "upper" expects only 1 argument(s).'],
    ];
    expect(cases.map(([text]) => fails(text))).to.deep.equal(cases.map(([, want]) => want));
    expect(ev('${upper(["a"]...)}${join("-", [["x"], ["y", "z"]]...)}')).to.equal('Ax-y-z');
  });

  it('an argument error is at the argument (the expanded list for its elements), other errors at the call', () => {
    const at = (text: string) => {
      try {
        ev(text);
      } catch (e) {
        return (e as HclDiagnostic).at;
      }
      throw new Error(`${text} evaluated`);
    };
    // Offsets in the template text: `${` is 0 and 1, the call's name starts at 2.
    expect(at('${max(1, "x")}')).to.equal('${max(1, '.length);
    expect(at('${max(1, [2, "x"]...)}')).to.equal('${max(1, '.length);
    expect(at('${element([1], -1)}')).to.equal('${element([1], '.length);
    expect(at('${index([1], 2)}')).to.equal(2);
    expect(at('${upper()}')).to.equal(2);
  });

  it('try and can take their arguments unevaluated', () => {
    expect(ev('${try(var.nope, var.n)}${try(1)}${can(var.n)}${can(var.nope)}')).to.equal('31truefalse');
    expect(fails('${can()}')).to.equal('Not enough function arguments; Function "can" expects 1 argument(s). Missing value for "expression".');
    expect(fails('${can(1, 2)}')).to.equal('Too many function arguments; Function "can" expects only 1 argument(s).');
    expect(fails('${try()}')).to.equal(invalid('expressions', 'at least one argument is required'));
    expect(fails('${try(upper(), nope())}')).to.equal(
      'Error in function call; Call to function "try" failed: no expression succeeded:\n' +
        '- Not enough function arguments; Function "upper" expects 1 argument(s). Missing value for "str".\n' +
        '- Call to unknown function; There is no function named "nope".\n\n' +
        'At least one expression must produce a successful result.',
    );
  });
});
