/**
 * berth's template engine against Go's `text/template` (Go 1.19), byte for byte: every case of
 * spec/fixtures/templates/cases.json is run through berth and its output and error text are
 * compared with what Go printed (expected.json, written by scripts/template-corpus/regen.sh).
 */
import { expect } from 'chai';
import { cases, expected, runCase } from './corpus.ts';

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
});
