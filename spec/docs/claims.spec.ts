/**
 * Every behavioural claim of the checked docs names the spec that backs it (a spec file and pieces
 * of its test titles), and each named file and title is there: a claim without one, a spec
 * renamed or a test retitled fails here. Checked: docs/gc.md.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { claimProblems, claimsOf, testTitles } from './claims.ts';

const ROOT = join(import.meta.dirname, '..', '..');
/** The docs whose every paragraph and item must name its spec. */
const CHECKED = ['docs/gc.md'];

describe('the docs: every claim names its spec', () => {
  for (const doc of CHECKED)
    it(`${doc}: each paragraph and item names a spec file and test titles that exist`, () => {
      expect(claimProblems(doc, readFileSync(join(ROOT, doc), 'utf8'), ROOT)).to.deep.equal([]);
    });

  it('the check refuses a claim with no spec, a missing spec file and a title no test has', () => {
    const md = [
      '---',
      'title: t',
      '---',
      '# Heading',
      '',
      'A claim with no spec.',
      '',
      '- an item backed by `spec/docs/claims.spec.ts` "the check refuses a claim", "two',
      '  lines" (a title no test has, wrapped);',
      '- one citing `spec/nowhere.spec.ts` "x".',
      '',
      '```',
      'code is not a claim',
      '```',
    ].join('\n');
    expect(claimsOf(md).map((c) => c.line)).to.deep.equal([6, 8, 10]);
    expect(claimProblems('d.md', md, ROOT)).to.deep.equal([
      'd.md:6: names no spec: A claim with no spec.…',
      'd.md:8: no test in spec/docs/claims.spec.ts has "two lines" in its title',
      'd.md:10: spec/nowhere.spec.ts does not exist',
    ]);
  });

  it("reads a spec's literal test titles, quotes of every kind, escapes undone", () => {
    expect(testTitles(`it('a \\'b\\'', f); it("c", f);\nit(\`d\`, f); xit('no', f); it(name, f);`)).to.deep.equal(["a 'b'", 'c', 'd']);
  });
});
