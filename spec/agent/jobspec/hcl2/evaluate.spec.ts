/**
 * berth's HCL2 evaluator (issue #36 item 3): values as HCL computes them, and Nomad's/HCL's error
 * texts for what fails.
 */
import { expect } from 'chai';
import { evaluate, type EvalContext } from '../../../../agent/jobspec/hcl2/evaluate.ts';
import { HclDiagnostic } from '../../../../agent/jobspec/hcl2/errors.ts';
import { nomadFunctions } from '../../../../agent/jobspec/hcl2/functions/index.ts';
import { parseTemplate } from '../../../../agent/jobspec/hcl2/parser.ts';
import type { Value } from '../../../../agent/jobspec/hcl2/values.ts';

const functions = nomadFunctions({ basedir: '/nonexistent', allowFs: false });
const ctx = (src: string): EvalContext => ({
  src,
  vars: new Map<string, Value>([
    ['n', 3],
    ['names', ['b', 'a', 'c']],
    ['m', { x: 1, y: 2 }],
    ['s', '5'],
  ]),
  local: (name) => ({ greeting: 'hi' })[name] ?? null,
  localNames: () => ['greeting'],
  functions,
});
const ev = (text: string) => evaluate(parseTemplate(text), ctx(text));
const fails = (text: string): string => {
  try {
    ev(text);
  } catch (e) {
    expect(e).to.be.instanceOf(HclDiagnostic);
    return (e as Error).message;
  }
  throw new Error(`${text} evaluated`);
};

describe('hcl2: expressions', () => {
  it('operators with HCL precedence and conversions', () => {
    expect(ev('${1 + 2 * 3 - 4 / 2}')).to.equal(5);
    expect(ev('${(1 + 2) * 3}')).to.equal(9);
    expect(ev('${-5 % 3}')).to.equal(-2);
    expect(ev('${0.1 + 0.2}')).to.equal(0.3); // exact decimals, as cty's big numbers give
    expect(ev('${1.1 * 3}-${0.3 - 0.1}')).to.equal('3.3-0.2');
    expect(ev('${var.s + 1}')).to.equal(6); // a numeric string converts
    expect(ev('${1 < 2 && 2 < 3 || false}')).to.equal(true);
    expect(ev('${!true == false}')).to.equal(true);
    expect(ev('${1 == "1"}')).to.equal(false); // different types are never equal
    expect(ev('${[1, {a = "b"}] == [1, {a = "b"}]}')).to.equal(true);
    expect(ev('${var.n > 2 ? "big" : "small"}')).to.equal('big');
    expect(ev('${"true" ? 1 : 2}')).to.equal(1);
  });

  it('templates: interpolation, directives with strip markers, escapes; one interpolation keeps its type', () => {
    expect(ev('${var.names}')).to.deep.equal(['b', 'a', 'c']);
    expect(ev('n=${var.n} ${true}')).to.equal('n=3 true');
    expect(ev('%{ for x in var.names ~}\n  ${x},\n%{~ endfor }!')).to.equal('b,a,c,!');
    expect(ev('%{ if var.n == 3 }three%{ else }other%{ endif }')).to.equal('three');
    expect(ev('$${NOMAD_X} %%{ x }')).to.equal('${NOMAD_X} %{ x }');
    expect(ev('${"a\\tb\\u00e9${var.n}"}')).to.equal('a\tbé3');
  });

  it('for expressions, grouping, splats, index and attribute access', () => {
    expect(ev('${[for i, x in var.names : "${i}${x}" if x != "a"]}')).to.deep.equal(['0b', '2c']);
    expect(ev('${{for k, v in var.m : v => k}}')).to.deep.equal({ 1: 'x', 2: 'y' });
    expect(ev('${{for x in ["a", "b", "a"] : x => x...}}')).to.deep.equal({ a: ['a', 'a'], b: ['b'] });
    expect(ev('${[{a = {b = 1}}, {a = {b = 2}}][*].a.b}')).to.deep.equal([1, 2]);
    expect(ev('${[{a = 1}].*.a}')).to.deep.equal([1]);
    expect(ev('${var.names[1]}${var.m["y"]}${var.m.x}${local.greeting}')).to.equal('a21hi');
    expect(ev('${var.names.0}')).to.equal('b');
  });

  it('references the client fills in at run time stay as written', () => {
    expect(ev('${NOMAD_ALLOC_DIR}/data')).to.equal('${NOMAD_ALLOC_DIR}/data');
    expect(ev('${attr.kernel.name}-${node.unique.name}-${meta.rack}')).to.equal('${attr.kernel.name}-${node.unique.name}-${meta.rack}');
    expect(ev('${env["HOME"]}')).to.equal('${env["HOME"]}');
  });

  it("errors in HCL's words", () => {
    expect(fails('${nope(1)}')).to.equal('Call to unknown function; There is no function named "nope".');
    expect(fails('${env("HOME")}')).to.equal('Call to unknown function; There is no function named "env".');
    expect(fails('${upper([1])}')).to.equal('Invalid function argument; Invalid value for "str" parameter: string required.');
    expect(fails('${upper()}')).to.equal('Not enough function arguments; Function "upper" expects 1 argument(s). Missing value for "str".');
    expect(fails('${upper("a", "b")}')).to.equal('Too many function arguments; Function "upper" expects only 1 argument(s).');
    expect(fails('${var.nope}')).to.match(/^Unsupported attribute; This object does not have an attribute named "nope"/);
    expect(fails('${var.names[5]}')).to.match(/^Invalid index; The given key does not identify an element in this collection value/);
    expect(fails('${"a" + 1}')).to.equal('Invalid operand; Unsuitable value for left operand: a number is required.');
    expect(fails('${1 ? 2 : 3}')).to.equal('Incorrect condition type; The condition expression must be of type bool.');
    expect(fails('${[for x in 5 : x]}')).to.equal(
      "Iteration over non-iterable value; A value of type number cannot be used as the collection in a 'for' expression.",
    );
    expect(fails('${{for x in ["a", "a"] : x => 1}}')).to.match(/^Duplicate object key; Two different items produced the key "a"/);
    expect(fails('x${[1]}')).to.equal('Invalid template interpolation value; Cannot include the given value in a string template: string required.');
    expect(fails('${jsondecode("{")}')).to.match(/^Invalid function argument; Invalid value for "str" parameter: /);
    expect(fails('${element([], 0)}')).to.equal(
      'Invalid function argument; Invalid value for "list" parameter: cannot use element function with an empty list.',
    );
    expect(fails('${file("x")}')).to.equal('Error in function call; Call to function "file" failed: filesystem function disabled.');
    expect(fails('${bcrypt("x")}')).to.match(
      /^Error in function call; Call to function "bcrypt" failed: the function bcrypt is one of Nomad's but berth does not evaluate it/,
    );
  });
});

describe('hcl2: Nomad functions', () => {
  const cases: Array<[string, Value]> = [
    ['${upper("ab")}${lower("CD")}${title("hello world")}', 'ABcdHello World'],
    ['${format("%s-%03d-%.2f-%q-%t-%v", "a", 7, 3.14159, "q", true, 1)}', 'a-007-3.14-"q"-true-1'],
    ['${formatlist("%s=%d", ["a", "b"], [1, 2])}', ['a=1', 'b=2']],
    ['${join(",", var.names)}', 'b,a,c'],
    ['${split(",", "a,b,,c")}', ['a', 'b', '', 'c']],
    ['${replace("a.b.c", ".", "-")}', 'a-b-c'],
    ['${regex_replace("a1b22", "[0-9]+", "#")}', 'a#b#'],
    ['${substr("hello", 1, 3)}${substr("hello", -3, -1)}', 'ellllo'],
    ['${trimspace("  x ")}${trim("--x--", "-")}${trimprefix("ab", "a")}${trimsuffix("ab", "b")}', 'xxba'],
    ['${concat([1], [2, 3])}', [1, 2, 3]],
    ['${contains(var.names, "a")}', true],
    ['${distinct([1, 2, 1])}', [1, 2]],
    ['${element(var.names, 4)}', 'a'],
    ['${flatten([[1, [2]], 3])}', [1, 2, 3]],
    ['${keys({b = 1, a = 2})}', ['a', 'b']],
    ['${values({b = 1, a = 2})}', [2, 1]],
    ['${length(var.names)}${length("héllo")}${length(var.m)}', '352'],
    ['${lookup(var.m, "z", 9)}', 9],
    ['${merge({a = 1}, {b = 2}, {a = 3})}', { a: 3, b: 2 }],
    ['${range(3)}', [0, 1, 2]],
    ['${range(1, 10, 4)}', [1, 5, 9]],
    ['${reverse([1, 2])}', [2, 1]],
    ['${setunion(["b"], ["a", "b"])}', ['a', 'b']],
    ['${slice(var.names, 1, 3)}', ['a', 'c']],
    ['${sort(var.names)}', ['a', 'b', 'c']],
    ['${zipmap(["a", "b"], [1, 2])}', { a: 1, b: 2 }],
    ['${jsonencode({a = [1, true, null]})}', '{"a":[1,true,null]}'],
    ['${jsondecode("{\\"a\\": [1]}")}', { a: [1] }],
    ['${yamldecode("a: [1, x]")}', { a: [1, 'x'] }],
    ['${yamlencode({b = [1, 2], a = "x"})}', '"a": "x"\n"b":\n- 1\n- 2\n'],
    ['${jsonencode({b = "<&>", a = 1})}', '{"a":1,"b":"\\u003c\\u0026\\u003e"}'],
    ['${base64encode("hi")}${base64decode("aGk=")}', 'aGk=hi'],
    ['${csvdecode("a,b\\n1,2\\n")}', [{ a: '1', b: '2' }]],
    ['${max(1, 5, 3)}${min(var.n, 2)}${abs(-4)}${ceil(1.2)}${floor(1.8)}', '52421'],
    ['${parseint("ff", 16)}${parseint("-101", 2)}', '255-5'],
    ['${coalesce("", null, "x")}', 'x'],
    ['${compact(["a", "", "b"])}', ['a', 'b']],
    ['${try(var.nope, "fallback")}${can(var.nope)}${can(var.n)}', 'fallbackfalsetrue'],
    ['${uuidv5("dns", "www.example.com")}', '2ed6657d-e927-568b-95e1-2665a8aea6a2'],
    ['${timeadd("2024-01-01T23:30:00+02:00", "1h")}', '2024-01-02T00:30:00+02:00'],
    ['${formatdate("EEE, DD MMM YYYY hh:mm:ss ZZZ", "2018-01-02T23:12:01Z")}', 'Tue, 02 Jan 2018 23:12:01 UTC'],
    ['${sha256("x")}', '2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881'],
    ['${max(var.names...)}', 'unreachable'],
  ];
  for (const [text, want] of cases.slice(0, -1))
    it(text, () => {
      expect(ev(text)).to.deep.equal(want);
    });

  it('`...` expands a list into the arguments', () => {
    expect(ev('${max([1, 7, 2]...)}')).to.equal(7);
    expect(fails('${max(var.names...)}')).to.equal('Invalid function argument; Invalid value for "numbers" parameter: a number is required.');
  });

  it('the table is Nomad’s set: env, regex and regexall are unknown, and the ones berth does not evaluate say so', () => {
    const evaluated = `abs abspath base64decode base64encode basename ceil chomp chunklist coalesce coalescelist compact concat contains
      csvdecode dirname distinct element file filebase64 fileexists flatten floor format formatdate formatlist indent index join
      jsondecode jsonencode keys length log lookup lower max md5 merge min parseint pathexpand pow range regex_replace replace
      reverse setintersection setproduct setunion sha1 sha256 sha512 signum slice sort split strlen strrev substr timeadd title
      trim trimprefix trimspace trimsuffix upper urlencode uuidv4 uuidv5 values yamldecode yamlencode zipmap`.split(/\s+/);
    const notEvaluated = ['bcrypt', 'rsadecrypt', 'cidrhost', 'cidrnetmask', 'cidrsubnet', 'cidrsubnets', 'convert', 'fileset'];
    expect(Object.keys(functions).sort()).to.deep.equal([...evaluated, ...notEvaluated].sort());
    for (const name of ['env', 'regex', 'regexall'])
      expect(fails(`\${${name}("x")}`)).to.equal(`Call to unknown function; There is no function named "${name}".`);
    for (const name of notEvaluated)
      expect(fails(`\${${name}("x")}`)).to.equal(
        `Error in function call; Call to function "${name}" failed: the function ${name} is one of Nomad's but berth does not evaluate it.`,
      );
    expect(ev('${try(var.nope, 1)}${can(var.n)}')).to.equal('1true');
  });

  it('indent is bounded as format widths are: at most 1 MiB of spaces', () => {
    expect(ev('${indent(2, "a\nb")}')).to.equal('a\n  b');
    expect(fails('${indent(1048577, "a")}')).to.match(/^Invalid function argument; Invalid value for "spaces" parameter: must be between 0 and 1048576/);
  });
});
