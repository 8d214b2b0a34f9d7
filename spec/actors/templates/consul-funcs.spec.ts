/**
 * consul-template's functions as Nomad documents them, with its argument order (the piped value
 * last): Go's JSON (sorted keys, HTML escaped), YAML, list and map helpers, the Nomad data
 * functions over a reader, the sprig functions, and the refusals (spew, an unknown sockaddr).
 */
import { expect } from 'chai';
import { render } from '../../../actors/templates/index.ts';
import { consulTemplateFuncs } from '../../../actors/templates/consul-funcs.ts';
import { nomadFuncs, type DepValue, type TemplateDep } from '../../../actors/templates/nomad-funcs.ts';
import { goJSON } from '../../../actors/templates/go-json.ts';
import { templateFunctionNames } from '../../../model/template-functions.ts';

const funcs = consulTemplateFuncs({ env: { A: '1' }, taskDir: '/tmp' });
const r = (text: string, data: unknown = null, extra = {}) => render(text, data, { funcs: { ...funcs, ...extra } });

describe('consul-template functions', () => {
  it('toJSON is Go json.Marshal: keys sorted by byte, <>& escaped, floats short; toUnescapedJSON keeps them', () => {
    const m = { b: '<a&b>', a: [1, 2.5, true, null], B: '\u2028' };
    expect(r('{{ toJSON . }}', m)).to.equal('{"B":"\\u2028","a":[1,2.5,true,null],"b":"\\u003ca\\u0026b\\u003e"}');
    expect(r('{{ toUnescapedJSON . }}', m)).to.equal('{"B":"\\u2028","a":[1,2.5,true,null],"b":"<a&b>"}');
    expect(r('{{ toJSONPretty . }}', { b: 1, a: { c: 'd' } })).to.equal('{\n  "a": {\n    "c": "d"\n  },\n  "b": 1\n}');
    expect(goJSON({ s: 'tab\tnl\nbs\b' })).to.equal('{"s":"tab\\tnl\\nbs\\u0008"}');
    expect(goJSON(1e21)).to.equal('1e+21');
  });

  it('toYAML as yaml.v2 writes it (sorted, sequences unindented, no trailing newline); parseYAML reads it back', () => {
    expect(r('{{ toYAML . }}', { b: 1, a: { c: 'd' }, l: ['x', 'y'] })).to.equal('a:\n  c: d\nb: 1\nl:\n- x\n- y');
    expect(r('{{ with parseYAML "a: 1\\nb: [x, y]" }}{{ .a }} {{ index .b 1 }}{{ end }}')).to.equal('1 y');
  });

  it('contains, in and the contains* family take the piped list last', () => {
    const d = { t: ['prod', 'web'], n: ['prod', 'db'] };
    expect(r('{{ if .t | contains "prod" }}y{{ end }}{{ if in .t "db" }}n{{ end }}', d)).to.equal('y');
    expect(r('{{ containsAll .n .t }} {{ containsAny .n .t }} {{ containsNone .n .t }} {{ containsNotAll .n .t }}', d)).to.equal('false true false true');
    expect(r('{{ if "a-prod-b" | contains "prod" }}s{{ end }}')).to.equal('s');
  });

  it('splitToMap, mergeMap, byTag, explode, minimum/maximum, parseUint, indent, envOrDefault', () => {
    expect(r('{{ range $k, $v := "a:1,b:2" | splitToMap "," ":" }}{{ $k }}={{ $v }};{{ end }}')).to.equal('a=1;b=2;');
    expect(r('{{ toJSON (mergeMap .o .b) }} {{ toJSON (mergeMapWithOverride .o .b) }}', { o: { a: 2, c: 3 }, b: { a: 1 } })).to.equal(
      '{"a":1,"c":3} {"a":2,"c":3}',
    );
    const svcs = [
      { Name: 'a', Tags: ['x', 'y'] },
      { Name: 'b', Tags: ['y'] },
    ];
    expect(r('{{ range $t, $s := byTag . }}{{ $t }}:{{ range $s }}{{ .Name }}{{ end }} {{ end }}', svcs)).to.equal('x:a y:ab ');
    expect(
      r('{{ toJSON (explode .) }}', [
        { Key: 'a/b', Value: '1' },
        { Key: 'a/c', Value: '2' },
      ]),
    ).to.equal('{"a":{"b":"1","c":"2"}}');
    expect(r('{{ 5 | maximum 2 }} {{ 5 | minimum 2 }} {{ parseUint "42" }}')).to.equal('5 2 42');
    expect(r('{{ indent 2 "a\\nb" }}|{{ envOrDefault "A" "z" }}|{{ envOrDefault "BERTH_SURELY_UNSET" "z" }}')).to.equal('  a\n  b|1|z');
    expect(() => r('{{ parseUint "-1" }}')).to.throw(/parseUint: invalid syntax/);
  });

  it('sprig_* functions, and spew_* and unknown sockaddr forms refused by name', () => {
    expect(r('{{ sprig_default "x" "" }} {{ "abc" | sprig_upper }} {{ sprig_list 1 2 3 | sprig_last }} {{ sprig_dict "a" 1 | sprig_toJson }}')).to.equal(
      'x ABC 3 {"a":1}',
    );
    expect(r('{{ sprig_splitList "," "a,b" | sprig_join "-" }} {{ sprig_until 3 | sprig_toJson }} {{ sprig_ternary "y" "n" true }}')).to.equal('a-b [0,1,2] y');
    expect(() => r('{{ spew_dump . }}')).to.throw(/function "spew_dump" is not supported by berth/);
    expect(() => r('{{ sockaddr "GetDefaultInterfaces | attr \\"name\\"" }}')).to.throw(/sockaddr: .* is not supported by berth/);
    expect(() => r('{{ sprig_nosuch 1 }}')).to.throw(/function "sprig_nosuch" not defined/);
    expect(() => r('{{ writeToFile "/tmp/x" "" "" "0644" "y" }}')).to.throw(/function "writeToFile" is not supported by berth/);
  });

  it('the Nomad functions read through the reader; absent data is missing, not an error', () => {
    const missing: string[] = [];
    const value: Record<string, DepValue> = {
      var: { namespace: 'default', path: 'nomad/jobs/j', items: { user: 'ada' }, createIndex: 1, modifyIndex: 2, createTime: 0, modifyTime: 0 },
    };
    const reader = {
      read: (d: TemplateDep) =>
        d.kind === 'var' && d.path === 'nomad/jobs/j' ? { fetched: true as const, value: value.var } : { fetched: true as const, value: undefined },
      missing: (d: TemplateDep) => void missing.push(JSON.stringify(d)),
    };
    const nf = nomadFuncs(reader, 'default');
    expect(r('{{ with nomadVar "nomad/jobs/j" }}{{ .user }}{{ end }}|{{ nomadVarExists "nomad/jobs/x" }}', null, nf)).to.equal('ada|false');
    expect(missing).to.deep.equal([]);
    expect(r('{{ with nomadVar "nomad/jobs/x@other" }}{{ .user }}{{ end }}', null, nf)).to.equal('');
    expect(missing).to.deep.equal([JSON.stringify({ kind: 'var', path: 'nomad/jobs/x', namespace: 'other' })]);
  });

  it('the function scan finds calls, not strings, fields, variables or comments', () => {
    expect(
      templateFunctionNames('{{ range service "web" }}{{ .key }}{{ end }} {{- key "a" | toUpper -}} {{/* secret */}} {{ "tree" }} {{ $x.ls }}'),
    ).to.deep.equal(['range', 'service', 'end', 'key', 'toUpper']);
    expect(templateFunctionNames('[[ key "a" ]] {{ secret "b" }}', '[[', ']]')).to.deep.equal(['key']);
  });

  it('nomadService reads tag.name@namespace; its sharding form picks count instances, the same ones for the same key', () => {
    const asked: TemplateDep[] = [];
    const inst = (id: string) => ({
      ID: id,
      Name: 'db',
      Node: 'n',
      Address: '127.0.0.1',
      Port: 1,
      Datacenter: 'dc1',
      Tags: [],
      JobID: 'j',
      AllocID: id,
      Namespace: 'prod',
    });
    const all = ['a', 'b', 'c', 'd', 'e', 'f'].map(inst);
    const nf = nomadFuncs({ read: (d) => (asked.push(d), { fetched: true, value: all }), missing: () => {} }, 'default');
    expect(r('{{ range nomadService "primary.db@prod" }}{{ .ID }}{{ end }}', null, nf)).to.equal('abcdef');
    expect(asked[0]).to.deep.equal({ kind: 'service', name: 'db', tag: 'primary', namespace: 'prod' });
    const share = (key: string) => r(`{{ range nomadService 2 "${key}" "db" }}{{ .ID }}{{ end }}`, null, nf);
    expect(share('web-1')).to.have.length(2);
    expect(share('web-1')).to.equal(share('web-1'));
    expect(new Set(['k1', 'k2', 'k3', 'k4', 'k5', 'k6'].map(share)).size).to.be.greaterThan(1);
    expect(asked.at(-1)).to.deep.equal({ kind: 'service', name: 'db', namespace: 'default' });
  });
});
