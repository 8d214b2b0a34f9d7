// Builds spec/fixtures/templates/cases.json (printed to stdout): the corpus of Go text/template
// cases that main.go runs through Go and go-corpus.spec.ts through berth. `regen.sh` runs both.
const D = {
  s: 'hello',
  e: '',
  n: 42,
  z: 0,
  neg: -7,
  f: 3.25,
  big: 1234567.891,
  tiny: 0.000012345,
  t: true,
  fa: false,
  nil: null,
  a: [1, 2, 3],
  sa: ['x', 'y', 'z'],
  ea: [],
  m: { b: 2, a: 1, c: 3 },
  em: {},
  nest: { x: { y: { z: 'deep' } }, l: [{ k: 'v0' }, { k: 'v1' }] },
  mixed: [1, 'two', 3.5, true, null, { k: 'v' }, [4, 5]],
  html: '<a href="x">&\'</a>',
  u: 'héllo wörld ✓',
  sp: 'a b&c=d/e?f',
  nl: 'line1\nline2\ttab',
};
const cases = [];
const c = (name, tpl, data = D, extra = {}) => cases.push({ name, tpl, data, ...extra });

// text, actions, constants
c('text/plain', 'just text');
c('text/empty', '');
c('text/newlines', 'a\nb\n\nc\n');
c('act/dot-map', '{{.m}}');
c('act/dot-whole-small', '{{.}}', { a: 1, b: [true, null] });
c('act/field', '{{.s}}');
c('act/field-int', '{{.n}}');
c('act/field-float', '{{.f}}');
c('act/field-big', '{{.big}}');
c('act/field-tiny', '{{.tiny}}');
c('act/field-bool', '{{.t}} {{.fa}}');
c('act/field-nil', '{{.nil}}');
c('act/field-missing', '{{.nope}}');
c('act/field-missing-chain', '{{.nope.deeper}}');
c('act/field-nested', '{{.nest.x.y.z}}');
c('act/field-slice', '{{.a}}');
c('act/field-mixed', '{{.mixed}}');
c('act/field-empty-slice', '{{.ea}} {{.em}}');
c('act/nil-data', '{{.}}', null);
c('act/nil-data-field', '{{.x}}', null);
c('act/string-data', '{{.}}', 'str');
c('act/int-data', '{{.}}', 5);
c('act/const-string', '{{"quoted\\tstr"}}');
c('act/const-raw', '{{`raw\\n`}}');
c('act/const-int', '{{42}}');
c('act/const-neg', '{{-42}}');
c('act/const-float', '{{3.5}}');
c('act/const-float-int', '{{3.0}}');
c('act/const-exp', '{{1e3}}');
c('act/const-exp-big', '{{1e21}}');
c('act/const-hex', '{{0x1F}}');
c('act/const-oct', '{{0o17}} {{017}}');
c('act/const-bin', '{{0b101}}');
c('act/const-underscore', '{{1_000_000}}');
c('act/const-char', "{{'a'}}");
c('act/const-char-escape', "{{'\\n'}}");
c('act/const-char-unicode', "{{'✓'}}");
c('act/const-bool', '{{true}}');
c('act/const-hexfloat', '{{0x1p-2}}');
c('act/dollar', '{{$.s}}');
c('act/dollar-whole', '{{$}}', { k: 'v' });
c('act/paren', '{{(.s)}}');
c('act/paren-chain', '{{(.nest).x.y.z}}');
c('act/paren-func', '{{(len .a)}}');
c('act/multi', '{{.s}}-{{.n}}-{{.f}}');
c('act/unicode', '{{.u}}');
c('act/html-not-escaped', '{{.html}}');
c('act/nest-list', '{{.nest.l}}');
c('act/float-frac', '{{.}}', [0.1, 0.5, 1.5, 100.25, 1e-7, 123456789.5, 1e20, 1.7976931348623157e308]);
c('act/neg-zero', '{{-0.0}}');

// comments and trimming
c('comment/basic', 'a{{/* hi */}}b');
c('comment/multiline', 'a{{/* line\nline */}}b');
c('comment/trim', 'a  {{- /* x */ -}}  b');
c('trim/left', 'a   {{- .s}}');
c('trim/right', '{{.s -}}   b');
c('trim/both', 'x \n {{- .s -}} \n y');
c('trim/newlines', '{{range .a -}}\n  {{.}}\n{{- end}}');
c('trim/not-marker', '{{-3}}');
c('trim/minus-number', '{{- -3 -}}');
c('trim/tabs', 'a\t\t{{- "b" -}}\t\tc');
c('trim/only-spaces', '   {{- "" -}}   ');

// variables
c('var/declare', '{{$x := .s}}{{$x}}');
c('var/declare-no-output', '{{$x := 1}}');
c('var/assign', '{{$x := 1}}{{$x = 2}}{{$x}}');
c('var/scope-if', '{{$x := 1}}{{if true}}{{$x = 2}}{{$y := 3}}{{end}}{{$x}}');
c('var/shadow', '{{$x := 1}}{{if true}}{{$x := 2}}{{$x}}{{end}}{{$x}}');
c('var/range-assign', '{{$s := 0}}{{range .a}}{{$s = .}}{{end}}{{$s}}');
c('var/field', '{{$m := .nest}}{{$m.x.y.z}}');
c('var/dollar-in-range', '{{range .a}}{{$.s}}{{end}}');
c('var/undefined', '{{$nope}}');
c('var/undefined-assign', '{{$nope = 1}}');
c('var/out-of-scope', '{{if true}}{{$x := 1}}{{end}}{{$x}}');
c('var/pipe-decl', '{{$x := .s | printf "%s!"}}{{$x}}');
c('var/missing', '{{$x := .nope}}{{$x}}');
c('var/int-field', '{{$x := 5}}{{$x.y}}');
c('var/string-field', '{{$x := "s"}}{{$x.y}}');
c('var/with', '{{with $x := .s}}{{$x}}{{.}}{{end}}');
c('var/template-no-inherit', '{{define "t"}}{{$x}}{{end}}{{$x := 1}}{{template "t"}}');

// if / else
c('if/true', '{{if .t}}yes{{end}}');
c('if/false', '{{if .fa}}yes{{else}}no{{end}}');
c('if/empty-string', '{{if .e}}yes{{else}}no{{end}}');
c('if/zero', '{{if .z}}yes{{else}}no{{end}}');
c('if/nil', '{{if .nil}}yes{{else}}no{{end}}');
c('if/missing', '{{if .nope}}yes{{else}}no{{end}}');
c('if/empty-slice', '{{if .ea}}yes{{else}}no{{end}}');
c('if/empty-map', '{{if .em}}yes{{else}}no{{end}}');
c('if/slice', '{{if .a}}yes{{end}}');
c('if/float', '{{if .f}}yes{{end}}');
c('if/float-zero', '{{if 0.0}}yes{{else}}no{{end}}');
c('if/else-if', '{{if .fa}}a{{else if .t}}b{{else}}c{{end}}');
c('if/else-if-chain', '{{if eq .n 1}}one{{else if eq .n 2}}two{{else if eq .n 42}}answer{{else}}other{{end}}');
c('if/else-if-none', '{{if .fa}}a{{else if .z}}b{{end}}');
c('if/nested', '{{if .t}}{{if .fa}}x{{else}}y{{end}}{{end}}');
c('if/pipeline', '{{if .s | len}}len{{end}}');
c('if/dot-unchanged', '{{if .nest}}{{.s}}{{end}}');
c('if/decl', '{{if $x := .n}}{{$x}}{{end}}');

// with
c('with/basic', '{{with .nest.x}}{{.y.z}}{{end}}');
c('with/else', '{{with .nope}}x{{else}}none{{end}}');
c('with/empty', '{{with .e}}x{{else}}empty:{{.s}}{{end}}');
c('with/else-with-119', '{{with .nope}}x{{else with .s}}{{.}}{{end}}');
c('with/else-if', '{{with .nope}}x{{else if .t}}y{{end}}');
c('with/int', '{{with .n}}{{.}}{{end}}');

// range
c('range/slice', '{{range .a}}[{{.}}]{{end}}');
c('range/strings', '{{range .sa}}{{.}},{{end}}');
c('range/map-sorted', '{{range .m}}{{.}}{{end}}');
c('range/map-kv', '{{range $k, $v := .m}}{{$k}}={{$v}};{{end}}');
c('range/slice-iv', '{{range $i, $v := .sa}}{{$i}}:{{$v}} {{end}}');
c('range/one-var', '{{range $v := .sa}}{{$v}}{{end}}');
c('range/else', '{{range .ea}}x{{else}}empty{{end}}');
c('range/else-map', '{{range .em}}x{{else}}empty{{end}}');
c('range/nil', '{{range .nil}}x{{else}}nil{{end}}');
c('range/missing', '{{range .nope}}x{{else}}missing{{end}}');
c('range/int', '{{range 5}}x{{end}}');
c('range/field-int', '{{range .n}}x{{end}}');
c('range/string', '{{range .s}}x{{end}}');
c('range/bool', '{{range .t}}x{{end}}');
c('range/nested', '{{range .nest.l}}{{.k}} {{end}}');
c('range/nested-ranges', '{{range $i, $x := .a}}{{range $.sa}}{{$i}}{{.}} {{end}}{{end}}');
c('range/break', '{{range .a}}{{if eq . 2}}{{break}}{{end}}{{.}}{{end}}');
c('range/continue', '{{range .a}}{{if eq . 2}}{{continue}}{{end}}{{.}}{{end}}');
c('range/break-nested', '{{range .a}}{{range .}}{{end}}{{end}}', { a: [[1, 2], [3]] });
c('range/break-inner', '{{range $o := .a}}{{range .}}{{if eq . 2}}{{break}}{{end}}{{.}}{{end}}|{{end}}', { a: [[1, 2, 3], [4]] });
c('range/mixed', '{{range .mixed}}{{.}}|{{end}}');
c('range/null-elem-field', '{{range .}}{{.x}}{{end}}', [null]);
c('range/int-elem-field', '{{range .}}{{.x}}{{end}}', [5]);
c('range/var-elem-field', '{{range $v := .}}{{$v.x}}{{end}}', [5]);
c('range/map-of-maps', '{{range $k, $v := .}}{{$k}}:{{$v.n}} {{end}}', { b: { n: 2 }, a: { n: 1 } });
c('range/dot-after', '{{range .a}}{{end}}{{.s}}');
c('range/keys-bytewise', '{{range $k, $v := .}}{{$k}}{{end}}', { b: 1, B: 2, a: 3, _: 4, 1: 5 });
c('range/var-scope', '{{range $i, $v := .a}}{{end}}{{$i}}');
c('range/decl-three', '{{range $a, $b, $c := .a}}{{end}}');
c('range/decl-bad', '{{range $a, 1 := .a}}{{end}}');
c('range/pipeline', '{{range .a | len | slice $.sa 0 | len}}x{{end}}');

// break/continue parse errors
c('break/outside', '{{break}}');
c('continue/outside', '{{continue}}');
c('break/args', '{{range .a}}{{break 1}}{{end}}');
c('break/in-define', '{{range .a}}{{define "x"}}{{break}}{{end}}{{end}}');

// define / template / block
c('tmpl/define', '{{define "x"}}X{{.}}{{end}}{{template "x" .s}}');
c('tmpl/no-dot', '{{define "x"}}[{{.}}]{{end}}{{template "x"}}');
c('tmpl/dot', '{{define "x"}}[{{.s}}]{{end}}{{template "x" .}}');
c('tmpl/undefined', '{{template "nope"}}');
c('tmpl/block', '{{block "b" .s}}default {{.}}{{end}}');
c('tmpl/block-override', '{{block "b" .s}}default {{.}}{{end}}', D, { defs: [['b', 'override {{.}}']] });
c('tmpl/defs', '{{template "a" .n}}-{{template "b" .}}', D, {
  defs: [
    ['a', 'A{{.}}'],
    ['b', '{{define "c"}}C{{end}}B{{template "c"}}'],
  ],
});
c('tmpl/recursive', '{{define "r"}}{{if .}}{{index . 0}}{{template "r" slice . 1}}{{end}}{{end}}{{template "r" .a}}');
c('tmpl/only-defines', '{{define "a"}}A{{end}}');
c('tmpl/redefine-empty', '{{define "a"}}A{{end}}{{define "a"}}{{end}}{{template "a"}}');
c('tmpl/redefine', '{{define "a"}}A{{end}}{{define "a"}}B{{end}}');
c('tmpl/name-raw', '{{define `r`}}R{{end}}{{template `r`}}');
c('tmpl/name-not-string', '{{template .s}}');
c('tmpl/define-not-string', '{{define x}}{{end}}');
c('tmpl/define-unclosed', '{{define "x"}}abc');
c('tmpl/define-else', '{{define "x"}}a{{else}}b{{end}}');
c('tmpl/error-in-define', '{{define "x"}}\n  {{.a.b}}{{end}}{{template "x" .}}', { a: 5 });
c('tmpl/error-in-def-file', '{{template "d" .}}', { a: 5 }, { defs: [['d', 'line1\n{{.a.b}}']] });
c('tmpl/pipe-arg', '{{define "x"}}{{.}}{{end}}{{template "x" .a | len}}');
c('tmpl/vars-persist', '{{template "x" $y := 3}}{{$y}}{{define "x"}}{{.}}{{end}}');
c('tmpl/name-other', '{{.nope.x}}{{.n.x}}', D, { tplName: 'my.tmpl' });
c('tmpl/define-in-action', '{{if true}}{{define "x"}}{{end}}{{end}}');
c('tmpl/block-dot', '{{block "b" .nest.x}}{{.y.z}}{{end}}');

// builtin: and / or / not
c('and/basic', '{{and 1 2}} {{and 0 2}} {{and 1 ""}}');
c('and/returns-deciding', '{{and .s .n}} {{and .e .n}}');
c('and/short-circuit', '{{and .fa (index .a 99)}}');
c('and/one', '{{and .s}}');
c('and/none', '{{and}}');
c('and/pipe-final', '{{.n | and 1}} {{.z | and 1}}');
c('and/missing', '{{and .nope 1}}');
c('or/basic', '{{or 0 2}} {{or 0 ""}} {{or "a" "b"}}');
c('or/short-circuit', '{{or .t (index .a 99)}}');
c('or/missing', '{{or .nope "default"}}');
c('or/all-false', '{{or 0 .e .nil}}');
c('or/pipe', '{{.e | or "d"}}');
c('not/basic', '{{not .t}} {{not .z}} {{not .e}} {{not .a}} {{not .nope}} {{not .nil}}');
c('not/args', '{{not 1 2}}');
c('not/none', '{{not}}');

// builtin: eq ne lt le gt ge
c('eq/ints', '{{eq 1 1}} {{eq 1 2}} {{eq .n 42}}');
c('eq/multi', '{{eq .n 1 2 42}} {{eq .n 1 2 3}}');
c('eq/strings', '{{eq .s "hello"}} {{eq "a" "b"}}');
c('eq/bools', '{{eq .t true}} {{eq .fa true}}');
c('eq/floats', '{{eq .f 3.25}} {{eq 1.5 1.5}}');
c('eq/int-float', '{{eq .n 42.0}}');
c('eq/int-string', '{{eq .n "42"}}');
c('eq/float-int', '{{eq 1.5 1}}');
c('eq/nil-int', '{{eq .nil 1}}');
c('eq/missing-int', '{{eq .nope 1}}');
c('eq/missing-missing', '{{eq .nope .nope2}}');
c('eq/nil-nil', '{{eq .nil .nil}}');
c('eq/nil-literal', '{{eq nil nil}}');
c('eq/slices', '{{eq .a .a}}');
c('eq/maps', '{{eq .m .m}}');
c('eq/slice-int', '{{eq .a 1}}');
c('eq/slice-nil', '{{eq .a .nil}}');
c('eq/one-arg', '{{eq 1}}');
c('eq/no-arg', '{{eq}}');
c('eq/char', "{{eq 97 'a'}}");
c('eq/byte', '{{eq (index .s 0) 104}}');
c('eq/pipe', '{{.n | eq 42}}');
c('ne/basic', '{{ne 1 2}} {{ne .s "hello"}}');
c('ne/incompatible', '{{ne 1 "1"}}');
c('ne/three', '{{ne 1 2 3}}');
c('lt/ints', '{{lt 1 2}} {{lt 2 1}} {{lt .neg 0}}');
c('lt/strings', '{{lt "a" "b"}} {{lt "b" "a"}} {{lt "B" "a"}}');
c('lt/floats', '{{lt 1.5 2.5}} {{lt .f 3.0}}');
c('lt/int-float', '{{lt 1 2.5}}');
c('lt/bools', '{{lt true false}}');
c('lt/slices', '{{lt .a .a}}');
c('lt/nil', '{{lt .nil 1}}');
c('lt/missing', '{{lt .nope 1}}');
c('lt/one', '{{lt 1}}');
c('le/basic', '{{le 1 1}} {{le 1 2}} {{le 2 1}} {{le "a" "a"}}');
c('le/incompatible', '{{le 1 "a"}}');
c('gt/basic', '{{gt 2 1}} {{gt 1 1}} {{gt "b" "a"}}');
c('gt/bad', '{{gt .a 1}}');
c('ge/basic', '{{ge 2 2}} {{ge 1 2}} {{ge 2.5 2.5}}');
c('ge/bad', '{{ge true true}}');
c('cmp/byte-int', '{{lt (index .s 0) 200}} {{gt (index .s 0) -1}}');

// builtin: len index slice
c('len/string', '{{len .s}} {{len .u}} {{len ""}}');
c('len/slice', '{{len .a}} {{len .ea}}');
c('len/map', '{{len .m}}');
c('len/int', '{{len .n}}');
c('len/nil', '{{len .nil}}');
c('len/missing', '{{len .nope}}');
c('len/const', '{{len "abc"}}');
c('len/none', '{{len}}');
c('len/two', '{{len .a .a}}');
c('index/slice', '{{index .a 0}} {{index .a 2}}');
c('index/map', '{{index .m "b"}}');
c('index/map-missing', '{{index .m "zz"}}');
c('index/nested', '{{index .nest "l" 1 "k"}}');
c('index/string', '{{index .s 1}}');
c('index/string-printf', '{{printf "%c" (index .s 1)}}');
c('index/oob', '{{index .a 3}}');
c('index/oob-far', '{{index .a 10}}');
c('index/negative', '{{index .a -1}}');
c('index/string-oob', '{{index .s 5}}');
c('index/no-index', '{{index .a}}');
c('index/nil', '{{index .nil 0}}');
c('index/missing', '{{index .nope 0}}');
c('index/int', '{{index .n 0}}');
c('index/bad-key', '{{index .m 1}}');
c('index/nil-key', '{{index .m nil}}');
c('index/string-idx', '{{index .a "1"}}');
c('index/float-idx', '{{index .a 1.0}}');
c('index/nil-idx', '{{index .a nil}}');
c('index/null-elem', '{{index .mixed 4}}');
c('index/through-null', '{{index .mixed 4 0}}');
c('index/var-idx', '{{$i := 1}}{{index .sa $i}}');
c('index/field-idx', '{{index .sa .one}}', { sa: ['a', 'b'], one: 1 });
c('slice/slice', '{{slice .a 1}} {{slice .a 1 2}} {{slice .a}}');
c('slice/string', '{{slice .s 1 3}} {{slice .s 2}}');
c('slice/3', '{{slice .a 0 1 2}}');
c('slice/string-3', '{{slice .s 0 1 2}}');
c('slice/oob', '{{slice .a 0 9}}');
c('slice/inverted', '{{slice .a 2 1}}');
c('slice/inverted3', '{{slice .a 0 2 1}}');
c('slice/too-many', '{{slice .a 0 1 2 3}}');
c('slice/int', '{{slice .n 0}}');
c('slice/nil', '{{slice .nil 0}}');
c('slice/field-idx', '{{slice .sa .one}}', { sa: ['a', 'b'], one: 1 });
c('slice/var-idx', '{{$i := 1}}{{slice .a $i}}');
c('slice/empty', '{{slice .a 3}}');

// print / println / printf
c('print/spacing', '{{print 1 2 "a" "b" 3 .t .fa}}');
c('print/strings', '{{print "a" "b"}}');
c('print/mixed', '{{print "a" 1 2 "b"}}');
c('print/nil', '{{print nil}} {{print .nil}} {{print .nope}}');
c('print/none', '{{print}}');
c('print/floats', '{{print 1.5 2.0 1e6 1e-5 123456.0 1234567.0}}');
c('print/map-slice', '{{print .m .a}}');
c('println/basic', '{{println 1 "a" 2}}');
c('println/none', '{{println}}');
c('println/nil', '{{println nil .nope}}');
c('printf/basic', '{{printf "%s=%d" .s .n}}');
c('printf/no-args', '{{printf "plain"}}');
c('printf/pct', '{{printf "100%%"}}');
c('printf/pipe', '{{.n | printf "%d!"}}');
c('printf/pipe-format', '{{"%s!" | printf}}');
c('printf/format-field', '{{printf .fmt 1}}', { fmt: 'n=%d' });
c('printf/format-int', '{{printf 5}}');
c('printf/format-field-int', '{{printf .n}}');
c('printf/format-missing', '{{printf .nope}}');
c('printf/format-nil', '{{printf .nil}}');
c('printf/format-nil-const', '{{printf nil}}');
c('printf/none', '{{printf}}');
c('printf/extra', '{{printf "%d" 1 2 "x"}}');
c('printf/extra-nil', '{{printf "x" nil .nope}}');
c('printf/missing', '{{printf "%d %s"}}');
c('printf/missing-one', '{{printf "%d %s" 1}}');
c('printf/noverb', '{{printf "abc%"}}');
c('printf/bad-width', '{{printf "%*d" "x" 1}}');
c('printf/star-width', '{{printf "%*d|%-*d|" 5 1 4 2}}');
c('printf/star-neg', '{{printf "%*d|" -5 1}}');
c('printf/star-prec', '{{printf "%.*f" 2 3.14159}}');
c('printf/bad-prec', '{{printf "%.*f" "x" 3.14}}');
c('printf/index', '{{printf "%[2]d %[1]d" 1 2}}');
c('printf/index-bad', '{{printf "%[3]d" 1 2}}');
c('printf/index-bad-syntax', '{{printf "%[x]d" 1}}');
c('printf/index-reuse', '{{printf "%d %[1]d %d" 1 2}}');
c('printf/index-width', '{{printf "%[1]*d" 4 7}}');
c('printf/nil-verbs', '{{printf "%v %d %s %T" nil nil nil nil}}');
c('printf/T', '{{printf "%T %T %T %T %T %T %T %T" .s .n .f .t .a .m (index .s 0) 1.0}}');
c('printf/T-width', '{{printf "%10T|%-6T|" 1 "s"}}');
c('printf/unicode-verb', '{{printf "%ä" 1}}');
c('printf/verb-upper-unknown', '{{printf "%Z" 1}}');

// fmt verbs on ints
const ints = [0, 1, -1, 42, -42, 255, 65, 1234567];
const intVerbs = [
  '%d',
  '%5d',
  '%-5d|',
  '%05d',
  '%+d',
  '% d',
  '%x',
  '%X',
  '%#x',
  '%#X',
  '%o',
  '%#o',
  '%O',
  '%b',
  '%#b',
  '%c',
  '%q',
  '%+q',
  '%U',
  '%#U',
  '%v',
  '%+v',
  '%.3d',
  '%8.3d',
  '%-8.3d|',
  '%08.3d',
  '%+05d',
  '% 05d',
  '%.0d',
  '%5.0d|',
  '%x',
  '%08x',
  '%#08x',
  '%e',
  '%f',
  '%s',
  '%t',
  '%10v|',
];
intVerbs.forEach((v, i) => c(`fmt-int/${i}-${v}`, `{{range .}}{{printf ${JSON.stringify(v)} .}};{{end}}`, ints));
// fmt verbs on floats
const floats = [0, 1.5, -1.5, 3.14159265358979, 1e-7, 1234567.891, 100, 0.1, 2.5, 0.125, 1e21, -0.0001, 123456789012];
const floatVerbs = [
  '%v',
  '%f',
  '%.2f',
  '%8.3f|',
  '%-8.2f|',
  '%08.2f',
  '%+.1f',
  '% .2f',
  '%e',
  '%.2e',
  '%E',
  '%g',
  '%.3g',
  '%G',
  '%10.4g|',
  '%.0f',
  '%.0e',
  '%+g',
  '%#g',
  '%#.3g',
  '%#f',
  '%#.0f',
  '%.1f',
  '%5.1f',
  '%d',
  '%s',
  '%q',
  '%.10f',
  '%.20f',
  '%.0g',
  '%.15g',
  '%.17g',
  '%F',
  '%+v',
  '%x',
];
floatVerbs.forEach((v, i) => c(`fmt-float/${i}-${v}`, `{{range .}}{{printf ${JSON.stringify(v)} .}};{{end}}`, floats, v === '%x' ? { data: [] } : {}));
c('fmt-float/halfeven', '{{printf "%.2f %.2f %.2f %.1f %.0f %.0f %.0f %.3f" 0.125 0.375 2.675 0.25 0.5 1.5 2.5 1.0005}}');
c('fmt-float/consts', '{{printf "%v %v %v %v %v" 1.0 1e6 1e-4 1e-5 12345678.0}}');
c('fmt-float/int-const-verbs', '{{printf "%d %v %f" 3.0 3.0 3}}');
// fmt verbs on strings
const strs = ['', 'a', 'hello', 'héllo', 'tab\there', 'quote"s', '✓✓✓', 'back`tick', 'nl\n'];
const strVerbs = [
  '%s',
  '%10s|',
  '%-10s|',
  '%.2s',
  '%5.1s|',
  '%q',
  '%+q',
  '%#q',
  '%x',
  '%X',
  '% x',
  '%# x',
  '%#x',
  '%.2x',
  '%10x|',
  '%v',
  '%d',
  '%010s',
  '%-010s|',
  '%t',
  '%c',
  '%8q|',
  '%T',
];
strVerbs.forEach((v, i) => c(`fmt-str/${i}-${v}`, `{{range .}}{{printf ${JSON.stringify(v)} .}};{{end}}`, strs));
// fmt verbs on bools, nil, slices, maps
const boolVerbs = ['%t', '%v', '%5t|', '%-6v|', '%d', '%s', '%q'];
boolVerbs.forEach((v, i) => c(`fmt-bool/${i}-${v}`, `{{printf ${JSON.stringify(v)} true}} {{printf ${JSON.stringify(v)} false}}`));
const compVerbs = ['%v', '%+v', '%d', '%s', '%q', '%x', '%5v', '%-4v|', '%03d', '%.1f', '%t'];
compVerbs.forEach((v, i) =>
  c(
    `fmt-comp/${i}-${v}`,
    `{{printf ${JSON.stringify(v)} .a}} {{printf ${JSON.stringify(v)} .sa}} {{printf ${JSON.stringify(v)} .m}} {{printf ${JSON.stringify(v)} .mixed}}`,
  ),
);
c('fmt-comp/nested-map', '{{printf "%v" .}}', { a: { b: { c: [1, { d: null }] } }, e: [] });
c('fmt-comp/flags-mix', '{{printf "%-5d|%+.2e|%x|%X|%o" 3 12345.678 "hi" -255 8}}');
c('fmt/many', '{{printf "%s is %d years and %.1f%% done: %v %t" "Bob" 30 99.5 .a true}}');

// html / js / urlquery
c('html/basic', '{{html .html}}');
c('html/pipe', '{{.html | html}}');
c('html/multi', '{{html "<" 1 2 ">"}}');
c('html/nil', '{{html .nope}} {{html nil}} {{html .nil}}');
c('html/nul', '{{html "a\\x00b"}}');
c('html/int', '{{html 5}}');
c('js/basic', '{{js .html}}');
c('js/quotes', '{{js "it\'s \\"q\\" \\\\ = &"}}');
c('js/control', '{{js .nl}}');
c('js/unicode', '{{js .u}}');
c('js/nonprint', '{{js "a\\u00a0b\\u2028c"}}');
c('js/multi', '{{js 1 "<" true}}');
c('urlquery/basic', '{{urlquery .sp}}');
c('urlquery/unicode', '{{urlquery .u}}');
c('urlquery/multi', '{{urlquery "a b" 1}}');
c('urlquery/pipe', '{{.s | urlquery}}');
c('urlquery/safe', '{{urlquery "AZaz09-_.~!*\'()"}}');

// call
c('call/nil', '{{call .nil}}');
c('call/missing', '{{call .nope}}');
c('call/non-func', '{{call .n}}');
c('call/none', '{{call}}');

// user functions
const F = { funcs: true };
c('func/upper', '{{upper .s}}', D, F);
c('func/upper-pipe', '{{.s | upper}}', D, F);
c('func/upper-bad', '{{upper .n}}', D, F);
c('func/fail', '{{fail}}', D, F);
c('func/fail-later', 'before {{.s}} {{fail 1 2}} after', D, F);
c('func/nothing', '{{nothing}}', D, F);
c('func/nothing-field', '{{(nothing).x}}', D, F);
c('func/list', '{{list 1 "a" .t}}', D, F);
c('func/list-range', '{{range list 3 2 1}}{{.}}{{end}}', D, F);
c('func/list-empty', '{{list}}', D, F);
c('func/dict', '{{$d := dict "b" 2 "a" 1}}{{$d}} {{$d.a}}', D, F);
c('func/dict-chain', '{{(dict "k" "v").k}}', D, F);
c('func/add', '{{add 1 2 .n}}', D, F);
c('func/add-pipe', '{{.n | add 1 | add 2}}', D, F);
c('func/add-bad', '{{add 1.5}}', D, F);
c('func/undefined', '{{nofunc 1}}');
c('func/not-defined-exec', '{{upper "x"}}');
c('func/as-arg', '{{printf "%s" (upper "x")}}', D, F);
c('func/ident-arg', '{{print list}}', D, F);
c('func/if', '{{if nothing}}y{{else}}n{{end}}', D, F);
c('func/eq-result', '{{eq (add 1 1) 2}}', D, F);

// missingkey options
for (const mk of ['default', 'zero', 'error', 'invalid']) {
  c(`missingkey/${mk}/missing`, '{{.nope}}', D, { missingkey: mk });
  c(`missingkey/${mk}/chain`, '{{.nope.deeper}}', D, { missingkey: mk });
  c(`missingkey/${mk}/nested`, '{{.nest.x.nope}}', D, { missingkey: mk });
  c(`missingkey/${mk}/if`, '{{if .nope}}y{{else}}n{{end}}', D, { missingkey: mk });
  c(`missingkey/${mk}/printf`, '{{printf "%v" .nope}}', D, { missingkey: mk });
  c(`missingkey/${mk}/nil-data`, '{{.x}}', null, { missingkey: mk });
  c(`missingkey/${mk}/index`, '{{index .m "nope"}}', D, { missingkey: mk });
  c(`missingkey/${mk}/present-nil`, '{{.nil}}', D, { missingkey: mk });
  c(`missingkey/${mk}/len`, '{{len .nope}}', D, { missingkey: mk });
  c(`missingkey/${mk}/eq`, '{{eq .nope "x"}}', D, { missingkey: mk });
  c(`missingkey/${mk}/with`, '{{with .nope}}y{{else}}n{{end}}', D, { missingkey: mk });
  c(`missingkey/${mk}/partial`, 'a{{.s}}b{{.nope}}c', D, { missingkey: mk });
}

// exec errors
c('err/field-on-int', '{{.n.x}}');
c('err/field-on-string', '{{.s.x}}');
c('err/field-on-slice', '{{.a.x}}');
c('err/field-on-nil', '{{.nil.x}}');
c('err/field-args', '{{.s 1}}');
c('err/field-pipe-arg', '{{1 | .s}}');
c('err/nil-command', '{{nil}}');
c('err/const-args', '{{1 2}}');
c('err/dot-args', '{{. 1}}');
c('err/var-args', '{{$ 1}}');
c('err/line-col', 'line one\nline two {{.n.x}}');
c('err/line-col-3', 'a\nb\nc   {{if .t}}\n    {{index .a 7}}{{end}}');
c('err/unicode-col', 'héllo ✓ {{.n.x}}');
c('err/partial-output', 'start {{.s}} {{index .a 9}} end');
c('err/in-range', '{{range .a}}{{.}}{{.x}}{{end}}');
c('err/in-with', '{{with .nest}}{{.x.y.z.w}}{{end}}');
c('err/chain-nil', '{{(nil).x}}');
c('err/chain-int', '{{(1).x}}');
c('err/chain-func', '{{(len .a).x}}');
c('err/if-error', '{{if index .a 5}}x{{end}}');
c('err/printf-ctx', '{{printf "%d" .n | len}}');
c('err/nested-pipe-ctx', '{{print (index .a 9)}}');
c('err/wrong-args-fixed', '{{lt 1 2 3}}');
c('err/var-chain-nil', '{{$x := .nil}}{{$x.y}}');
c('err/range-var-nil-field', '{{range $i, $v := .mixed}}{{if eq $i 4}}{{$v.k}}{{end}}{{end}}');
c('err/template-ctx', '{{template "x" .n.y}}{{define "x"}}{{end}}');

// parse errors
c('perr/unclosed-action', '{{.s');
c('perr/unclosed-action-nl', '{{.s\n\nfoo');
c('perr/unclosed-comment', '{{/* foo');
c('perr/comment-delim', '{{/* foo */ }}');
c('perr/unexpected-end', '{{end}}');
c('perr/unexpected-else', '{{else}}');
c('perr/missing-end', '{{if .t}}x');
c('perr/missing-end-range', '{{range .a}}x');
c('perr/extra-end', '{{if .t}}{{end}}{{end}}');
c('perr/else-twice', '{{if .t}}a{{else}}b{{else}}c{{end}}');
c('perr/empty-action', '{{}}');
c('perr/empty-if', '{{if}}{{end}}');
c('perr/empty-range', '{{range}}{{end}}');
c('perr/empty-with', '{{with}}{{end}}');
c('perr/empty-pipe', '{{.s | }}');
c('perr/non-exec', '{{.s | 1}}');
c('perr/non-exec-string', '{{.s | "x"}}');
c('perr/non-exec-dot', '{{1 | .}}');
c('perr/bad-char', '{{.s %}}');
c('perr/bad-char-field', '{{.s#}}');
c('perr/unterminated-string', '{{"abc}}');
c('perr/unterminated-raw', '{{`abc}}');
c('perr/unterminated-char', "{{'a}}");
c('perr/bad-char-const', "{{'ab'}}");
c('perr/bad-escape', '{{"\\q"}}');
c('perr/bad-number', '{{3k}}');
c('perr/bad-number-2', '{{0x}}');
c('perr/number-overflow', '{{99999999999999999999}}');
c('perr/paren-unclosed', '{{(.s}}');
c('perr/paren-extra', '{{.s)}}');
c('perr/paren-empty', '{{()}}');
c('perr/declare-bad', '{{$x : 1}}');
c('perr/declare-twice', '{{$x, $y := 1}}');
c('perr/after-term', '{{"s".x}}');
c('perr/after-term-num', '{{1.x}}');
c('perr/after-dot', '{{..x}}');
c('perr/nil-field', '{{nil.x}}');
c('perr/undefined-func', '{{foo}}');
c('perr/undefined-func-arg', '{{print foo}}');
c('perr/unknown-keyword-arg', '{{print if}}');
c('perr/define-nested', '{{if true}}{{define "a"}}{{end}}{{end}}');
c('perr/template-no-name', '{{template}}');
c('perr/block-no-name', '{{block}}{{end}}');
c('perr/block-no-pipe', '{{block "x"}}{{end}}');
c('perr/block-no-end', '{{block "x" .}}');
c('perr/line-number', 'a\nb\n{{.s\nc');
c('perr/line-number-2', 'a\n\n\n{{if .t}}\n\n{{else}}\n{{else}}{{end}}');
c('perr/unexpected-in-operand', '{{.s :=}}');
c('perr/range-bad-decl', '{{range $x := }}{{end}}');
c('perr/unexpected-rparen', '{{)}}');
c('perr/long-token', '{{.s "abcdefghijklmnopqrstuvwxyz" = }}');
c('perr/assign-in-arg', '{{print $x := 1}}');
c('perr/multi-define', '{{define "a"}}x{{end}}', D, { defs: [['b', '{{define "a"}}y{{end}}{{define "a"}}z{{end}}']] });
c('perr/else-with', '{{with .s}}{{else with .n}}{{end}}');
c('perr/trim-no-space', '{{-.s}}');
c('perr/trim-right-no-space', '{{.s-}}');
c('perr/in-def', 'ok', D, { defs: [['d', '\n\n{{.x']] });
c('perr/unicode-action', '{{.s ✓}}');
c('perr/tab-in-action-ok', '{{\t.s\t}}');
c('perr/newline-in-action-ok', '{{\n.s\n}}');
c('perr/else-if-missing-end', '{{if .t}}a{{else if .fa}}b');
c('perr/end-args', '{{if .t}}{{end .x}}');
c('perr/else-args', '{{if .t}}{{else .x}}{{end}}');
c('perr/complex', '{{1+2i}}');
c('num/complex-imag', '{{2i}}');
c('num/complex-exp', '{{1.5-3e2i}}');
c('num/complex-zero-imag', '{{1+0i}}');
c('fmt/complex-verbs', '{{printf "%v %.2f %g %e" 1+2i 3-4i 0.5+1i 1e3i}}');
c('if/complex-zero', '{{if 0i}}t{{else}}f{{end}}');
c('fmt/complex-type', '{{printf "%T" 1+2i}}');

// realistic Nomad-ish templates
c('nomad/env-file', '{{range $k, $v := .env}}{{$k}}={{$v}}\n{{end}}', { env: { PORT: '8080', HOST: 'db.local', DEBUG: 'true' } });
c('nomad/upstreams', 'upstream backend {\n{{- range .services}}\n  server {{.Address}}:{{.Port}};\n{{- end}}\n}\n', {
  services: [
    { Address: '10.0.0.1', Port: 8080 },
    { Address: '10.0.0.2', Port: 8081 },
  ],
});
c('nomad/conditional', '{{if eq .env "prod"}}replicas: 3{{else}}replicas: 1{{end}}', { env: 'prod' });
c('nomad/json', '{ "name": {{printf "%q" .name}}, "port": {{.port}} }', { name: 'svc "a"', port: 80 });
c('nomad/default', 'level={{or .log_level "info"}}', {});
c('nomad/join-manual', '{{range $i, $e := .hosts}}{{if $i}},{{end}}{{$e}}{{end}}', { hosts: ['a', 'b', 'c'] });
c('nomad/nested-defines', '{{define "row"}}<tr><td>{{.k | html}}</td></tr>{{end}}{{range .rows}}{{template "row" .}}{{end}}', {
  rows: [{ k: '<b>' }, { k: 'x&y' }],
});
c('nomad/ini', '[section]\n{{- range $k, $v := .kv}}\n{{$k}} = {{printf "%v" $v}}\n{{- end}}\n', { kv: { a: 1, b: 2.5, c: 'x', d: true } });

// more edges
c('edge/spaces-in-action', '{{ .s }}|{{   .n   }}');
c('edge/go-doc-trim', '{{23 -}} < {{- 45}}');
c('edge/comment-trim-left', 'a  {{- /* c */}}  b');
c('edge/comment-trim-right', 'a  {{/* c */ -}}  b');
c('edge/comment-no-space', 'a{{/*c*/}}b');
c('edge/else-spaces', '{{if .fa}}a{{ else }}b{{ end }}');
c('edge/else-trim', '{{if .fa}}a{{- else -}}  b  {{- end}}');
c('edge/redeclare', '{{$x := 1}}{{$x := 2}}{{$x}}');
c('edge/range-one-var-map', '{{range $v := .m}}{{$v}}{{end}}');
c('edge/range-break-first', '{{range $i, $e := .a}}{{break}}{{end}}done');
c('edge/range-continue-all', '{{range .a}}{{continue}}x{{end}}done');
c('edge/and-not', '{{if and .t (not .fa)}}ok{{end}}');
c('edge/nested-parens', '{{(index (index .nest.l 0) "k")}}');
c('edge/num-dot5', '{{.5}}');
c('edge/num-plus', '{{+5}}');
c('edge/num-trailing-dot', '{{1.}}');
c('edge/num-exp-neg', '{{1e-3}}');
c('edge/num-upper-hex', '{{0X1F}}');
c('edge/num-float-int', '{{0.1e2}}');
c('edge/num-neg-zero-int', '{{-0}}');
c('edge/num-leading-zero', '{{09}}');
c('edge/char-hex', "{{'\\x41'}} {{'\\u00e9'}} {{'\\''}}");
c('edge/char-printf', "{{printf \"%c%c\" 'h' 'i'}}");
c('edge/string-escapes', '{{"\\u00e9\\x41\\101\\a\\\\"}}');
c('edge/string-bad-quote-escape', '{{"\\\'"}}');
c('edge/unicode-field', '{{.ключ}}', { ключ: 'значение' });
c('edge/key-with-space', '{{index . "a key"}}', { 'a key': 1 });
c('edge/field-underscore', '{{._x}} {{.x_1}}', { _x: 1, x_1: 2 });
c('edge/with-missing-empty', '{{with .nope}}{{end}}end');
c('edge/len-printf', '{{len .a | printf "%03d"}}');
c('edge/printf-list-floats', '{{printf "%v" (list 1.0 2 2.5)}}', D, { funcs: true });
c('edge/printf-byte', '{{printf "%v %d %x %c %q %T" (index .s 0) (index .s 0) (index .s 0) (index .s 0) (index .s 0) (index .s 0)}}');
c('edge/print-byte', '{{index .s 0}} {{print (index .s 0) (index .s 1)}}');
c('edge/html-map', '{{html .m}}');
c('edge/println-range', '{{range .sa}}{{println .}}{{end}}');
c('edge/fmt-flags-order', '{{printf "%-+5d|%+-5d|%0-5d|%-05d|" 3 3 3 3}}');
c('edge/fmt-neg-hex', '{{printf "%x %X %#x %o %b" -255 -255 -255 -8 -5}}');
c('edge/fmt-sharp-str', '{{printf "%#X %# X %#q" "hi" "hi" "a`b"}}');
c('edge/fmt-big-rune', '{{printf "%c|%q|%U" 1114112 1114112 1114112}}');
c('edge/fmt-unicode-prec', '{{printf "%.3s|%5.2s|" "héllo" "✓✓✓"}}');
c('edge/fmt-width-rune', '{{printf "%5c|%-5q|" 65 66}}');
c('edge/fmt-v-width-str', '{{printf "%8v|%-8v|" "ab" "cd"}}');
c('edge/fmt-float-width-v', '{{printf "%6.2v|%8v|" 3.14159 2.5}}');
c('edge/fmt-sharp-v', '{{printf "%#v" .s}}');
c('edge/fmt-sharp-v-comp', '{{printf "%#v" .}}', { a: [1, 'x', null, 2.5, true], m: { k: { n: null } }, e: [] });
c('edge/fmt-sharp-v-floats', '{{printf "%#v %#v %#v %#v" 1.0 2.5 1e21 1e-7}}');
c('edge/fmt-sharp-v-width', '{{printf "%#8v|%#-8v|" "a" 1}}');
c('edge/fmt-sharp-v-nil', '{{printf "%#v" nil}}');
c('edge/fmt-sharp-v-byte', '{{printf "%#v %#x" (index .s 0) (index .s 0)}}');
c('edge/fmt-sharp-v-int', '{{printf "%#v %#v" 1 true}}');
c('edge/fmt-zero-prec-str', '{{printf "%.0s|%.s|" "abc" "abc"}}');
c('edge/fmt-pct-width', '{{printf "%5%|%-5%|"}}');
c('edge/fmt-star-missing', '{{printf "%*d"}}');
c('edge/fmt-star-only', '{{printf "%*d" 5}}');
c('edge/fmt-dot-end', '{{printf "%5."}}');
c('edge/fmt-index-zero', '{{printf "%[0]d" 1}}');
c('edge/fmt-index-after', '{{printf "%[2]*[1]d" 12 5}}');
c('edge/fmt-index-prec', '{{printf "%[3]*.[2]*[1]f" 12.0 2 6}}');
c('edge/fmt-index-extra-ok', '{{printf "%[1]d" 1 2 3}}');
c('edge/fmt-huge-width', '{{printf "%10000000d" 1}}');
c('edge/fmt-float-small', '{{printf "%v %v %v %g" 0.00001 0.0001 123456.7 1e-320}}');
c('edge/fmt-float-exp3', '{{printf "%e %g" 1e300 1e-300}}');
c('edge/fmt-round-up', '{{printf "%.2f %.1f %.0f %.3e %.2g" 9.995 9.95 9.5 9.9995e5 99.5}}');
c('edge/fmt-zero-float', '{{printf "%e %f %g %.3g %x" 0.0 0.0 0.0 0.0 0.0}}');
c('edge/fmt-hex-float', '{{printf "%x %X %.2x %#x" 1.0 -2.5 3.14159 1.5}}');
c('edge/fmt-extra-map', '{{printf "" .m .a}}');
c('edge/sprint-float-string', '{{print 1.5 "x" 2.5 3.5}}');
c('edge/dollar-in-template', '{{define "t"}}{{$}}{{end}}{{template "t" 5}}');
c('edge/template-in-range', '{{define "t"}}<{{.}}>{{end}}{{range .a}}{{template "t" .}}{{end}}');
c('edge/template-null-elem', '{{define "t"}}<{{.}}>{{end}}{{range .mixed}}{{template "t" .}}{{end}}');
c('edge/block-in-range', '{{range .a}}{{block "b" .}}[{{.}}]{{end}}{{end}}');
c('edge/if-range-var', '{{range $i, $v := .a}}{{if $i}},{{end}}{{$v}}{{end}}');
c('edge/with-dot-elem', '{{range .nest.l}}{{with .k}}{{.}}{{end}}{{end}}');
c('edge/eq-byte-char', "{{eq (index .s 0) 'h'}}");
c('edge/eq-float-const', '{{eq 1.0 1.0}} {{eq .f .f}}');
c('edge/lt-byte-neg', '{{lt (index .s 0) -1}}');
c('edge/eq-null-elem', '{{eq (index .mixed 4) nil}}');
c('edge/eq-iface-str', '{{eq (index .sa 0) "x"}}');
c('edge/ne-nil', '{{ne .nil 1}}');
c('edge/index-map-of-slices', '{{index . "k" 1}}', { k: [5, 6] });
c('edge/slice-string-unicode', '{{slice .u 0 2}}|{{len .u}}');
c('edge/slice-iface-idx', '{{slice .a (index .a 0)}}');
c('edge/not-pipe', '{{.t | not}}');
c('edge/paren-pipe-final', '{{.s | (printf "%s-%s" "x")}}');
c('edge/nil-arg-print', '{{print nil 1}}');
c('edge/var-dollar-reassign', '{{$ = 5}}{{$}}');
c('edge/range-over-func-result', '{{range $i, $v := list "a" "b"}}{{$i}}{{$v}}{{end}}', D, { funcs: true });
c('edge/range-iface-key', '{{range $k, $v := dict "a" 1}}{{printf "%T %T" $k $v}}{{end}}', D, { funcs: true });
c('edge/missing-in-range', '{{range .nest.l}}{{.nope}}{{end}}');
c('edge/field-of-list', '{{(index .nest.l 1).k}}');
c('edge/crlf', 'a\r\n{{- .s -}}\r\nb');
c('edge/long-text', 'x'.repeat(300) + '{{.n.y}}');
c('edge/multiline-col', '\n\n\t\t{{.n.y}}');

// more errors and scoping
c('more/with-var-scope', '{{with $x := .s}}{{end}}{{$x}}');
c('more/range-else-var', '{{range $x := .ea}}{{else}}{{$x}}{{end}}');
c('more/if-else-var', '{{if $x := .fa}}{{else}}{{$x}}{{end}}');
c('more/assign-outer-in-range', '{{$n := 0}}{{range .a}}{{$n = add $n .}}{{end}}{{$n}}', D, { funcs: true });
c('more/template-vars-reset', '{{define "t"}}{{$.n}}{{end}}{{$x := 1}}{{template "t" .}}');
c('more/printf-in-pipe-chain', '{{.a | len | printf "%d items" | printf "%q"}}');
c('more/index-pipe', '{{1 | index .a}}');
c('more/slice-pipe', '{{1 | slice .sa}}');
c('more/eq-pipe-multi', '{{3 | eq 1 2}}');
c('more/call-pipe', '{{.n | call .nil}}');
c('more/len-pipe-twice', '{{.a | len .a}}');
c('more/not-defined-method-args', '{{.m.a 1 2}}');
c('more/var-args', '{{$x := 1}}{{$x 2}}');
c('more/string-cmd-args', '{{"a" "b"}}');
c('more/pipe-to-field', '{{.s | .m.a}}');
c('more/pipe-to-var', '{{$x := 1}}{{.s | $x}}');
c('more/deep-missing-error', '{{.nest.x.nope.y}}', D, { missingkey: 'error' });
c('more/range-missing-error', '{{range .nest.l}}{{.nope}}{{end}}', D, { missingkey: 'error' });
c('more/zero-chain', '{{.nope.x}}', D, { missingkey: 'zero' });
c('more/zero-print', '{{print .nope}} {{len .nope}}', D, { missingkey: 'zero' });
c('more/html-escape-all', '{{html "\\"\'&<>"}}');
c('more/js-all', '{{js "\\\\\'\\"<>&=\\u0001\\u001f"}}');
c('more/urlquery-nil', '{{urlquery nil}} {{urlquery .nope}}');
c('more/print-nested-nil-map', '{{print .}}', { a: null, b: [null, {}] });
c('more/println-strings', '{{println "a" "b"}}');
c('more/nested-define-block', '{{define "outer"}}[{{block "inner" .}}in{{.}}{{end}}]{{end}}{{template "outer" 1}}{{template "inner" 2}}');
c('more/template-string-name-escape', '{{define "a\\tb"}}T{{end}}{{template "a\\tb"}}');
c('more/template-undefined-ctx', 'x\n  {{template "zz" .a}}');
c('more/break-in-if-in-range', '{{range .a}}{{if ge . 2}}{{break}}{{else}}{{.}}{{end}}{{end}}');
c('more/continue-in-with', '{{range .nest.l}}{{with .k}}{{if eq . "v0"}}{{continue}}{{end}}{{.}}{{end}}{{end}}');
c('more/range-map-break', '{{range $k, $v := .m}}{{if eq $k "b"}}{{break}}{{end}}{{$k}}{{end}}');
c('more/break-func', '{{range .a}}{{break}}{{end}}', D, { funcs: true });
c('more/comparison-strings-unicode', '{{lt "é" "z"}} {{lt "Z" "a"}}');
c('more/ge-mixed', '{{ge 1.5 1}}');
c('more/lt-uint-int', '{{lt (index .s 0) 105}} {{lt 103 (index .s 0)}}');
c('more/eq-bool-int', '{{eq true 1}}');
c('more/eq-first-missing', '{{eq .nope .nope}}');
c('more/float-keys-print', '{{.}}', { x: 1e-7, y: 123456789.123, z: -0.5 });
c('more/int-like-float-data', '{{printf "%T %T %T" .a .b .c}}', { a: 1.0, b: 1e3, c: 9007199254740992 });

process.stdout.write(JSON.stringify(cases, null, 1) + '\n');
