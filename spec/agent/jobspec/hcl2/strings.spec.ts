/**
 * The string and numeric functions, case by case through the evaluator: each result whole (text
 * counted in grapheme clusters, as cty counts it), each error in HashiCorp's words.
 */
import { expect } from 'chai';
import type { Value } from '../../../../agent/jobspec/hcl2/values.ts';
import { functionCalls, invalidArgument, callFailed } from './function-calls.ts';

const { ev, fails } = functionCalls();

const invalid = invalidArgument;
const failed = callFailed;

describe('hcl2: string and numeric functions', () => {
  const results: Array<[string, Value]> = [
    // Go's strings.Title: words begin after ASCII punctuation and spaces, not after `_`, a digit or other symbols.
    ['${title("hello world-foo o\'neil a_b 1st x.y éa «b» (c) x\\ty")}', "Hello World-Foo O'Neil A_b 1st X.Y Éa «b» (C) X\tY"],
    ['${lower("ÀB")}${upper("é")}', 'àbÉ'],
    ['${chomp("a\\n\\r\\n")}${chomp("b\\r")}${chomp("c\\nd")}', 'abc\nd'],
    ['${indent(2, "a\\nb\\n")}', 'a\n  b\n  '],
    ['${indent(0, "a\\nb")}', 'a\nb'],
    ['${strlen("👍🏽a")}', 2],
    ['${strrev("ab👍🏽")}', '👍🏽ba'],
    ['${substr("hello", 1, -1)}', 'ello'],
    ['${substr("hello", 3, 10)}', 'lo'],
    ['${substr("hello", -10, 2)}', 'he'],
    ['${substr("h👍🏽llo", 1, 2)}', '👍🏽l'],
    ['${substr("abc", 3, 1)}', ''],
    ['${indent(1048576, "x")}', 'x'],
    ['${substr("abc", 0, 1)}|${substr("abc", 1, 0)}', 'a|'],
    ['${trim("xxaxx", "x")}${trim("abc", "")}${trim("xyx", "xy")}', 'aabc'],
    ['${trimprefix("ab", "")}${trimsuffix("ab", "")}${trimprefix("ab", "b")}${trimsuffix("ab", "a")}', 'abababab'],
    ['${trimsuffix("abab", "ab")}${trimprefix("abab", "ab")}', 'abab'],
    ['${trimsuffix("abcab", "ab")}', 'abc'],
    ['${join("-", [])}', ''],
    ['${join("-", ["a"], [], [1, true])}', 'a-1-true'],
    ['${split(",", "")}', []],
    ['${split("", "ab")}', ['a', 'b']],
    ['${replace("aaa", "a", "b")}', 'bbb'],
    ['${regex_replace("abc", "(b)", "[$1]")}', 'a[b]c'],
    ['${regex_replace("abcb", "(?P<x>b)", "<${x}>")}', 'a<b>c<b>'],
    ['${regex_replace("ABC", "(?i)b", "-")}', 'A-C'],
    ['${regex_replace("A\\nB", "(?is)a.b", "x")}', 'x'],
    ['${regex_replace("abc", "(?P<first>a)(b)", "$2$${first}$first$${1}")}', 'baaac'],
    ['${formatlist("%s", [])}', []],
    ['${formatlist("%s-%s", "x", ["a", "b"])}', ['x-a', 'x-b']],
    ['${log(8, 2)}', 3],
    ['${pow(2, 10)}', 1024],
    ['${signum(-3)}${signum(0)}${signum(2)}', '-101'],
    ['${ceil(-1.5)}${floor(-1.5)}${abs(-0.5)}', '-1-20.5'],
    ['${min(3, -1, 2)}', -1],
    ['${parseint("zZ", 62)}', 2231],
    ['${parseint("+7", 8)}', 7],
    ['${parseint("-10", 2)}', -2],
    ['${parseint("Ff", 16)}', 255],
    ['${parseint("Zz", 36)}', 1295],
  ];
  for (const [text, want] of results)
    it(text, () => {
      expect(ev(text)).to.deep.equal(want);
    });

  it("errors in HashiCorp's words", () => {
    const cases: Array<[string, string]> = [
      ['${indent(-1, "x")}', invalid('spaces', 'must be between 0 and 1048576')],
      ['${indent(1048577, "x")}', invalid('spaces', 'must be between 0 and 1048576')],
      ['${substr("hé", 3, 1)}', invalid('offset', 'offset is greater than the length of the string')],
      ['${join("-")}', failed('join', 'at least one list is required')],
      ['${join("-", ["a"], [null])}', invalid('lists', 'element 0 is null')],
      ['${join("-", ["a", [1]])}', invalid('lists', 'element 1 is not a string')],
      ['${formatlist("%s-%s", ["a"], ["b", "c"])}', failed('formatlist', 'all lists must have the same length')],
      ['${max()}', failed('max', 'must pass at least one number')],
      ['${min()}', failed('min', 'must pass at least one number')],
      ['${parseint("", 10)}', failed('parseint', 'cannot parse "" as a base 10 integer')],
      ['${parseint("19", 8)}', failed('parseint', 'cannot parse "19" as a base 8 integer')],
      ['${parseint("-", 10)}', failed('parseint', 'cannot parse "-" as a base 10 integer')],
      ['${parseint("Zz", 35)}', failed('parseint', 'cannot parse "Zz" as a base 35 integer')],
      ['${parseint("12", 1)}', invalid('base', 'base must be a whole number between 2 and 62 inclusive')],
      ['${parseint("12", 63)}', invalid('base', 'base must be a whole number between 2 and 62 inclusive')],
      ['${parseint("1", 2.5)}', invalid('base', 'base must be a whole number between 2 and 62 inclusive')],
      ['${parseint(12, 10)}', invalid('number', 'first argument must be a string, not number')],
      ['${parseint(null, 10)}', invalid('number', 'first argument must be a string, not null')],
    ];
    expect(cases.map(([text]) => fails(text))).to.deep.equal(cases.map(([, want]) => want));
    expect(fails('${regex_replace("a", "(", "-")}')).to.match(/^Invalid function argument; Invalid value for "substr" parameter: invalid regexp pattern: /);
  });
});
