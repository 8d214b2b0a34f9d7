/**
 * Every behavioural claim of the checked docs names the spec that backs it (a spec file and pieces
 * of its test titles), and each named file and title is there: a claim without one, a spec
 * renamed or a test retitled fails here. Checked: the docs whose front matter says `claims: checked`.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { claimProblems, claimsOf, testTitles } from './claims.ts';

const ROOT = join(import.meta.dirname, '..', '..');
/**
 * The docs whose every paragraph and item must name its spec: those whose front matter says
 * `claims: checked` (a doc opts in as its claims are cited, and cannot drop out unnoticed: the
 * list below must hold it).
 */
const CHECKED = readdirSync(join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`)
  .filter((doc) => /^---\n(?:.*\n)*?claims: checked\n(?:.*\n)*?---\n/.test(readFileSync(join(ROOT, doc), 'utf8')));

describe('the docs: every claim names its spec', () => {
  it('the checked docs include every doc that opted in so far', () => {
    expect(CHECKED).to.include.members(['docs/gc.md']);
  });

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
      'An introduction. <!-- not a claim: it says what the page is for -->',
      '',
      'A bare marker. <!-- not a claim: -->',
      '',
      '```',
      'code is not a claim',
      '```',
    ].join('\n');
    expect(claimsOf(md).map((c) => c.line)).to.deep.equal([6, 8, 10, 12, 14]);
    expect(claimsOf(md)[3]!.notAClaim).to.equal('it says what the page is for');
    expect(claimProblems('d.md', md, ROOT)).to.deep.equal([
      'd.md:6: names no spec: A claim with no spec.…',
      'd.md:8: no test in spec/docs/claims.spec.ts has "two lines" in its title',
      'd.md:10: spec/nowhere.spec.ts does not exist',
      'd.md:14: "not a claim" must say why',
    ]);
  });

  it("reads a spec's literal test titles, quotes of every kind, escapes undone", () => {
    expect(testTitles(`it('a \\'b\\'', f); it("c", f);\nit(\`d\`, f); xit('no', f); it(name, f);`)).to.deep.equal(["a 'b'", 'c', 'd']);
  });
});
