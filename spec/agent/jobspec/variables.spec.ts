/**
 * `variables.ts`: the `variable` blocks a job file declares, and each variable's value from its
 * default, `-var-file`s and `-var`s (later wins, as in Nomad), converted to the declared type as
 * jobspec2 converts them; every refusal is a JobspecError naming the variable and the file.
 */
import { expect } from 'chai';
import { parseHcl } from '../../../agent/jobspec/hcl.ts';
import { declaredVariables, resolveVariables, type VarFile, type VarValue } from '../../../agent/jobspec/variables.ts';
import { JobspecError } from '../../../index.ts';

const noRead = (path: string): Promise<string> => Promise.reject(new Error(`read ${path}`));

/** The declared variables of `text`. */
async function declared(text: string) {
  return declaredVariables(await parseHcl(text, 'job.nomad.hcl'), 'job.nomad.hcl');
}

/** The values of `decl`'s variables with these -vars and var files, as a plain object. */
async function values(decl: string, vars: Record<string, string | VarValue> = {}, files: VarFile[] = [], read = noRead) {
  return Object.fromEntries(await resolveVariables(await declared(decl), 'job.nomad.hcl', vars, files, read));
}

/** What a rejection says: its message, file and path. */
async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(JobspecError);
    const j = e as JobspecError;
    return { message: j.message, file: j.file, path: j.path };
  }
  throw new Error('it was accepted');
}

describe('jobspec: variables, declared and resolved', () => {
  it('declaredVariables: each block as its type (without ${}), default and description', async () => {
    const d = await declared(
      'variable "a" {\n  type = list(string)\n  default = ["x"]\n  description = "d"\n  sensitive = true\n  nullable = false\n}\nvariable "b" {}\nvariable "c" {\n  type = map( string )\n  default = 3\n}\n',
    );
    expect([...d]).to.deep.equal([
      ['a', { type: 'list(string)', default: ['x'], description: 'd' }],
      ['b', { type: undefined, default: undefined, description: undefined }],
      ['c', { type: 'map( string )', default: 3, description: undefined }],
    ]);
    // A validation block is HCL's too (berth does not run it).
    expect([...(await declared('variable "v" {\n  default = 1\n  validation {\n    condition = true\n  }\n}\n'))]).to.deep.equal([
      ['v', { type: undefined, default: 1, description: undefined }],
    ]);
    expect([...declaredVariables({}, 'f.hcl')]).to.deep.equal([]);
    // The JSON syntax: one block as an object; a description that is not a string is none.
    expect([...declaredVariables({ variable: { x: { type: 'number', description: 5 }, y: 'not a block' } }, 'f.json')]).to.deep.equal([
      ['x', { type: 'number', default: undefined, description: undefined }],
    ]);
    expect([...declaredVariables({ variable: { x: [{ type: 7 }] } }, 'f.json')]).to.deep.equal([
      ['x', { type: undefined, default: undefined, description: undefined }],
    ]);
  });

  it('declaredVariables refuses a block without a name and a field HCL variables do not have', async () => {
    expect(await refusal(declared('variable = 1\n'))).to.deep.equal({
      message: 'job.nomad.hcl: variable blocks need a name label',
      file: 'job.nomad.hcl',
      path: 'variable',
    });
    expect(await refusal(declared('variable "v" {\n  validation {}\n  defualt = 1\n}\n'))).to.deep.equal({
      message: 'job.nomad.hcl: variable "v": unknown field "defualt"',
      file: 'job.nomad.hcl',
      path: 'variable.v.defualt',
    });
  });

  it('defaults, then var files, then -vars: later wins', async () => {
    const decl = 'variable "a" { default = "d" }\nvariable "b" { default = "d" }\nvariable "c" { default = "d" }\nvariable "e" { default = "d" }\n';
    const read = (path: string) => Promise.resolve(path === 'vars.hcl' ? 'b = "file"\nc = "file"\n' : `bad path ${path}`);
    const files: VarFile[] = ['vars.hcl', { filename: 'more.json', text: '{"e": "json"}' }];
    expect(await values(decl, { c: 'flag' }, files, read)).to.deep.equal({ a: 'd', b: 'file', c: 'flag', e: 'json' });
  });

  it('a -var string: the text itself when untyped, string or any; a number converted', async () => {
    const decl =
      'variable "u" {}\nvariable "s" { type = string }\nvariable "a" { type = any }\nvariable "n" { type = number }\nvariable "f" { type = number }\n';
    expect(await values(decl, { u: '1', s: '[1]', a: 'true', n: ' 12 ', f: '-2.5e1' })).to.deep.equal({ u: '1', s: '[1]', a: 'true', n: 12, f: -25 });
    // A value given as a value (the API's Variables, say) is kept as it is.
    expect(await values(decl, { u: 3, s: ['x'], a: null, n: 4, f: 5 })).to.deep.equal({ u: 3, s: ['x'], a: null, n: 4, f: 5 });
    const typed = 'variable "l" { type = list(string) }\nvariable "b" { type = bool }\n';
    expect(await values(typed, { l: ['x', 'y'], b: true })).to.deep.equal({ l: ['x', 'y'], b: true });
  });

  it('a -var for a number that is not one is refused', async () => {
    const decl = 'variable "n" { type = number }\n';
    for (const [raw, shown] of [
      ['abc', '"abc"'],
      ['', '""'],
      ['  ', '"  "'],
      ['Infinity', '"Infinity"'],
      ['1 2', '"1 2"'],
    ])
      expect(await refusal(values(decl, { n: raw! }))).to.deep.equal({
        message: `-var: variable "n": a number is required, got ${shown}`,
        file: '-var',
        path: undefined,
      });
  });

  it('a -var for a bool, list, map or object is an HCL literal', async () => {
    const decl =
      'variable "b" { type = bool }\nvariable "q" { type = bool }\nvariable "l" { type = list(string) }\nvariable "m" { type = map(string) }\nvariable "o" { type = object({ k = number }) }\n';
    expect(await values(decl, { b: 'true', q: '"false"', l: '["a", "b"]', m: '{ k = "v" }', o: '{ k = 1 }' })).to.deep.equal({
      b: true,
      q: false,
      l: ['a', 'b'],
      m: { k: 'v' },
      o: { k: 1 },
    });
    expect(await values(decl, { b: 'false', q: 'true', l: '[]', m: '{}', o: '{}' })).to.deep.equal({ b: false, q: true, l: [], m: {}, o: {} });
  });

  it('a -var literal of the wrong type, an expression, or not one value is refused', async () => {
    const decl = 'variable "b" { type = bool }\nvariable "l" { type = list( string ) }\n';
    const cases: Array<[Record<string, string>, string]> = [
      [{ b: '1' }, 'variable "b": a bool is required (true or false), got 1'],
      [{ b: '"yes"' }, 'variable "b": a bool is required (true or false), got "yes"'],
      [{ b: 'yes' }, 'variable "b": the value must be a literal (no variables, functions or interpolation), got "${yes}"'],
      [{ l: '"a"' }, 'variable "l": a list(string) value is required, as HCL (["a", "b"], { k = "v" }), got "\\"a\\""'],
      [{ l: 'null' }, 'variable "l": a list(string) value is required, as HCL (["a", "b"], { k = "v" }), got "null"'],
      [{ l: '["a", var.x]' }, 'variable "l": the value must be a literal (no variables, functions or interpolation), got "${var.x}"'],
      [{ l: '["a", "${upper("b")}"]' }, 'variable "l": the value must be a literal (no variables, functions or interpolation), got "${upper(\\"b\\")}"'],
      [{ l: '[{ k = "x${y}" }]' }, 'variable "l": the value must be a literal (no variables, functions or interpolation), got "x${y}"'],
      [{ l: '[]\nother = 1' }, 'variable "l": one value is required, got "[]\\nother = 1"'],
      [{ l: '[1 2]' }, 'variable "l": <value for var.l>:1:12: Missing item separator; Expected a comma to mark the beginning of the next item.'],
      [{ l: '[@]' }, 'variable "l": <value for var.l>:1:10: Invalid character; This character is not used within the language. (and 1 more error after it)'],
    ];
    const got = [];
    for (const [vars] of cases) got.push(await refusal(values(decl, vars)));
    expect(got).to.deep.equal(cases.map(([, message]) => ({ message: `-var: ${message}`, file: '-var', path: undefined })));
  });

  it('a var file value: a number or bool given as a string converted, other types as HCL typed them', async () => {
    const decl =
      'variable "n" { type = number }\nvariable "b" { type = bool }\nvariable "s" { type = string }\nvariable "l" { type = list(number) }\nvariable "u" {}\n';
    const text = 'n = "7"\nb = "true"\ns = "$${not} an expression"\nl = [1, 2]\nu = { k = ["v"] }\n';
    expect(await values(decl, {}, [{ filename: 'v.hcl', text }])).to.deep.equal({
      n: 7,
      b: true,
      s: '$${not} an expression',
      l: [1, 2],
      u: { k: ['v'] },
    });
    expect(await values('variable "a" { type = any }\n', {}, [{ filename: 'v.hcl', text: 'a = 1\n' }])).to.deep.equal({ a: 1 });
    expect(await values(decl, {}, [{ filename: 'v.json', text: '{"n": 8, "b": false, "s": "x", "l": [], "u": null}' }])).to.deep.equal({
      n: 8,
      b: false,
      s: 'x',
      l: [],
      u: null,
    });
  });

  it('a var file value of the wrong type, an expression or an undeclared name is refused, naming the var file', async () => {
    const decl = 'variable "n" { type = number }\nvariable "b" { type = bool }\nvariable "l" { type = list(string) }\nvariable "s" {}\n';
    const cases: Array<[string, string]> = [
      ['n = "x"', 'variable "n": a number is required, got "x"'],
      ['n = true', 'variable "n": a number is required, got true'],
      ['b = 1', 'variable "b": a bool is required (true or false), got 1'],
      ['l = "a"', 'variable "l": a list(string) value is required, got "a"'],
      ['l = null', 'variable "l": a list(string) value is required, got null'],
      ['s = "${var.n}"', 'variable "s": the value must be a literal (no variables, functions or interpolation), got "${var.n}"'],
      ['s = ["a", "b${c}"]', 'variable "s": the value must be a literal (no variables, functions or interpolation), got "b${c}"'],
      ['s = { k = { j = "${x}" } }', 'variable "s": the value must be a literal (no variables, functions or interpolation), got "${x}"'],
      ['x = 1', 'undefined variable "x" in var file (declare it with a variable "x" block)'],
    ];
    const got = [];
    for (const [text] of cases) got.push(await refusal(values(decl, {}, [{ filename: 'prod.hcl', text: `${text}\n` }])));
    expect(got).to.deep.equal(cases.map(([, message]) => ({ message: `prod.hcl: ${message}`, file: 'prod.hcl', path: undefined })));
  });

  it('an undeclared -var and a variable left unset are refused, naming the job file', async () => {
    expect(await refusal(values('variable "a" { default = 1 }\n', { b: 'x' }))).to.deep.equal({
      message: 'job.nomad.hcl: undefined -var variable "b" (declare it with a variable "b" block)',
      file: 'job.nomad.hcl',
      path: undefined,
    });
    expect(await refusal(values('variable "a" { default = 1 }\nvariable "z" {}\n'))).to.deep.equal({
      message: 'job.nomad.hcl: unset variable "z": give it a default, -var z=... or a -var-file',
      file: 'job.nomad.hcl',
      path: 'variable.z',
    });
    // A default of null is a default (HCL's null), not unset.
    expect(await values('variable "a" { default = null }\n')).to.deep.equal({ a: null });
  });
});
