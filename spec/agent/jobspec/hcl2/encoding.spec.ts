/**
 * The encoding functions (base64, JSON and YAML as go-cty writes them, CSV with a header, URL
 * query escaping, hashes, UUIDs), case by case through the evaluator: whole results, each error in
 * HashiCorp's words.
 */
import { expect } from 'chai';
import type { Value } from '../../../../agent/jobspec/hcl2/values.ts';
import { functionCalls, callFailed } from './function-calls.ts';

const { ev, fails } = functionCalls();
const failed = callFailed;

describe('hcl2: encoding functions', () => {
  const results: Array<[string, Value]> = [
    ['${base64encode("")}${base64encode("é")}', 'w6k='],
    ['${base64decode("w6k=")}${base64decode("")}', 'é'],
    ['${jsonencode(null)}', 'null'],
    ['${jsonencode("é<>&\\u2028")}', '"é\\u003c\\u003e\\u0026\\u2028"'],
    ['${jsonencode({b = 1, a = [true, {d = 1, c = 2}]})}', '{"a":[true,{"c":2,"d":1}],"b":1}'],
    ['${jsondecode("[1, null, {\\"a\\": \\"x\\"}]")}', [1, null, { a: 'x' }]],
    ['${yamlencode(null)}', 'null\n'],
    ['${yamlencode(["a", 1, true])}', '- "a"\n- 1\n- true\n'],
    ['${yamlencode({})}', '{}\n'],
    ['${yamlencode({b = {d = 1, c = "x"}})}', '"b":\n  "c": "x"\n  "d": 1\n'],
    ['${yamldecode("a: 2020-01-01")}', { a: '2020-01-01' }],
    ['${yamldecode("")}', null],
    ['${yamldecode("- 1\\n- {b: [x, null]}")}', [1, { b: ['x', null] }]],
    [
      '${csvdecode("a,b\\n\\"x,\\"\\"y\\"\\"\\",2\\r\\n3,4")}',
      [
        { a: 'x,"y"', b: '2' },
        { a: '3', b: '4' },
      ],
    ],
    ['${csvdecode("a,b\\n")}', []],
    ['${csvdecode("a,b\\r\\n1,2\\r")}', [{ a: '1', b: '2' }]],
    ['${csvdecode("a,b\\n,\\"\\"")}', [{ a: '', b: '' }]],
    ['${urlencode("a b&c/é!*\'()~._-")}', 'a+b%26c%2F%C3%A9%21%2A%27%28%29~._-'],
    ['${md5("")}', 'd41d8cd98f00b204e9800998ecf8427e'],
    ['${sha1("")}', 'da39a3ee5e6b4b0d3255bfef95601890afd80709'],
    ['${sha512("")}', 'cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e'],
    ['${uuidv5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com")}', '2ed6657d-e927-568b-95e1-2665a8aea6a2'],
  ];
  for (const [text, want] of results)
    it(text, () => {
      expect(ev(text)).to.deep.equal(want);
    });

  it("uuidv5's named namespaces are RFC 4122's; uuidv4 is random, version 4", () => {
    const named = ['url', 'oid', 'x500'].map((ns) => ev(`\${uuidv5("${ns}", "x")}`));
    const byId = ['6ba7b811', '6ba7b812', '6ba7b814'].map((id) => ev(`\${uuidv5("${id}-9dad-11d1-80b4-00c04fd430c8", "x")}`));
    expect(named).to.deep.equal(byId);
    expect(new Set(named).size).to.equal(3);
    const [a, b] = [ev('${uuidv4()}'), ev('${uuidv4()}')];
    expect(a).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a).to.not.equal(b);
  });

  it("errors in HashiCorp's words", () => {
    const cases: Array<[string, string]> = [
      ['${base64decode("abc")}', failed('base64decode', 'failed to decode base64 data "abc"')],
      ['${base64decode("a$==")}', failed('base64decode', 'failed to decode base64 data "a$=="')],
      ['${base64decode("/w==")}', failed('base64decode', 'the result of decoding the provided string is not valid UTF-8')],
      ['${csvdecode("")}', failed('csvdecode', 'missing header line')],
      ['${csvdecode("a,b\\n1,2\\n3")}', failed('csvdecode', 'record on line 3: wrong number of fields')],
      ['${csvdecode("a\\n\\"x")}', failed('csvdecode', 'extraneous or missing " in quoted-field')],
      ['${uuidv5("bogus", "x")}', failed('uuidv5', "uuidv5() doesn't support namespace bogus")],
    ];
    expect(cases.map(([text]) => fails(text))).to.deep.equal(cases.map(([, want]) => want));
    expect(fails('${jsondecode("x")}')).to.match(/^Invalid function argument; Invalid value for "str" parameter: Unexpected token/);
    expect(fails('${yamldecode("a: [")}')).to.match(/^Error in function call; Call to function "yamldecode" failed: [^\n]+\.$/);
  });
});
