/**
 * berth's template engine against Go's `text/template` (Go 1.19), byte for byte: every case of
 * spec/fixtures/templates/cases.json is run through berth and its output and error text are
 * compared with what Go printed (expected.json, written by scripts/template-corpus/regen.sh).
 */
import { expect } from 'chai';
import { cases, expected, runCase, type Case } from './corpus.ts';

/** Cases where berth knowingly differs from Go, and why (see docs/templates.md). */
const KNOWN_DIFFERENCES: Record<string, string> = {};

describe('templates: the Go corpus', () => {
  it('has several hundred cases, each with Go’s answer', () => {
    expect(cases.length).to.be.greaterThan(500);
    for (const c of cases) expect(expected.has(c.name), c.name).to.be.true;
    expect(new Set(cases.map((c) => c.name)).size).to.equal(cases.length);
  });

  for (const c of cases) {
    const known = KNOWN_DIFFERENCES[c.name];
    it(`${c.name}${known ? ' (known difference)' : ''}`, () => {
      const got = runCase(c);
      const want = expected.get(c.name)!;
      if (known) {
        expect(got, known).to.not.deep.equal(want);
        return;
      }
      expect({ output: got.output, error: got.error }).to.deep.equal({ output: want.output, error: want.error });
    });
  }

  /**
   * Each construct the docs list: at least one corpus case uses it, and every case that does
   * renders (or fails) as Go does.
   */
  const everyCaseUsing = (uses: Array<RegExp | ((c: Case) => boolean)>) => {
    for (const use of uses) {
      const picked = cases.filter((c) => (typeof use === 'function' ? use(c) : use.test(c.tpl)));
      expect(picked.length, `cases using ${String(use)}`).to.be.greaterThan(0);
      for (const c of picked) {
        const got = runCase(c);
        const want = expected.get(c.name)!;
        expect({ output: got.output, error: got.error }, c.name).to.deep.equal({ output: want.output, error: want.error });
      }
    }
  };
  const goSays = (piece: string) => (c: Case) => expected.get(c.name)!.output.includes(piece);

  it('text, trim markers and comments: every case using them matches Go', () => everyCaseUsing([/\{\{- /, / -\}\}/, /\{\{\/\*/]));

  it('pipelines, parenthesized pipelines, field chains and $: every case using them matches Go', () =>
    everyCaseUsing([/\|/, /\)\.\w/, /\.\w+\.\w+/, /\$[}. ]/, /\$\w+\.\w/]));

  it('variables declared and assigned: every case using them matches Go', () => everyCaseUsing([/\$\w+ :=/, /\$\w+ = /]));

  it('if, else if, with, range (two variables, else, over an int), break and continue: every case using them matches Go', () =>
    everyCaseUsing([
      /\{\{else if/,
      /\{\{with[^}]*\}\}.*\{\{else\}\}/,
      /\{\{range \$\w+, \$\w+ :=/,
      /\{\{range[^}]*\}\}.*\{\{else\}\}/,
      /\{\{range (\d|\.n|\.z)/,
      /\{\{break\}\}/,
      /\{\{continue\}\}/,
    ]));

  it('define, template, block, associated definitions and a named template: every case using them matches Go', () =>
    everyCaseUsing([/\{\{define/, /\{\{template/, /\{\{block/, (c) => (c.defs?.length ?? 0) > 0, (c) => c.tplName !== undefined]));

  it('constants (raw strings, chars, hex, octal, binary, _, hex floats, complex, nil): every case using them matches Go', () =>
    everyCaseUsing([/`/, /'.'/, /0x[0-9a-fA-F]/, /0o|\b0[0-7]+\b/, /0b[01]/, /\d_\d/, /0x[\d.a-f]*p/, /\di\b/, /\bnil\b/]));

  it('the builtins and registered functions: every case calling them matches Go', () =>
    everyCaseUsing([
      ...['and', 'or', 'not', 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'len', 'index', 'slice', 'print', 'printf', 'println', 'html', 'js', 'urlquery', 'call'].map(
        (f) => new RegExp(`\\b${f}\\b`),
      ),
      (c) => c.funcs === true,
    ]));

  it("fmt's verbs, flags, width, precision, * and argument indexes, and its error forms: every case using them matches Go", () =>
    everyCaseUsing([
      ...['v', 'T', 's', 'q', 'd', 'x', 'X', 'o', 'O', 'b', 'e', 'E', 'f', 'F', 'g', 'G', 't', 'c', 'U', '%'].map(
        (v) => new RegExp(`%[-+# 0]*[0-9]*(\\.[0-9]+)?${v}`),
      ),
      /%\+v/,
      /%#v/,
      /%[-+# 0]*\*|%\.\*/,
      /%\[\d\]/,
      ...['%!d(string=', '%!d(MISSING)', '%!(EXTRA', '%!(NOVERB)', '%!(BADWIDTH)', '%!(BADPREC)', '(BADINDEX)'].map(goSays),
    ]));

  it('missingkey default, zero, error and an invalid one: every case setting it matches Go', () =>
    everyCaseUsing(['default', 'zero', 'error', 'invalid'].map((m) => (c: Case) => c.missingkey === m)));

  it("parse and exec errors: every case Go refuses gets Go's error text", () =>
    everyCaseUsing([
      (c) => expected.get(c.name)!.error.includes('executing "'),
      (c) => /^template: [^:]+:\d+: (?!executing)/.test(expected.get(c.name)!.error),
    ]));
});
