/**
 * Claim: every mutant the last mutation run left alive is named in docs/mutation-survivors.md with
 * why (killed ones are not), and the check that says so reads that file the way it is written.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { DOC, compare, danglingRefs, entryHead, keyOf, loadReports, parseDoc, prune, rekey, spanOf, survivorsOf } from '../../scripts/survivors.mjs';

/** A report of one file with the given mutants, in Stryker's JSON shape. */
function report(
  file: string,
  source: string,
  mutants: { line: number; column: number; end?: number; mutatorName: string; replacement: string; status: string }[],
) {
  return {
    files: {
      [file]: {
        source,
        mutants: mutants.map((m) => ({ ...m, location: { start: { line: m.line, column: m.column }, end: { line: m.line, column: m.end ?? m.column + 1 } } })),
      },
    },
  };
}

describe('claim: every surviving mutant is listed with why', () => {
  it('the committed reports and docs/mutation-survivors.md agree: no survivor unlisted, no entry stale, none left to triage', () => {
    const survivors = survivorsOf(loadReports([]));
    const entries = parseDoc(readFileSync(DOC, 'utf8'));
    const { unlisted, stale } = compare(survivors, entries);
    expect(
      unlisted.map((s) => `${s.file} ${entryHead(s)}`),
      'survivors missing from docs/mutation-survivors.md',
    ).to.deep.equal([]);
    expect(
      stale.map((s) => s.key),
      'entries whose mutant no longer survives',
    ).to.deep.equal([]);
    expect(
      [...entries.values()].filter((e) => e.kind === 'TODO').map((e) => e.lineNo),
      'entries still TODO',
    ).to.deep.equal([]);
    expect(danglingRefs(entries), 'whys naming a line:column that is not an entry').to.deep.equal([]);
    expect(survivors.size, 'the reports hold mutants (an empty set would prove nothing)').to.be.above(0);
  });
});

describe('scripts/survivors.mjs', () => {
  const src = 'const a = `x`;\nif (a > 1) f();\n';
  const rep = report('m/a.ts', src, [
    { line: 2, column: 5, mutatorName: 'EqualityOperator', replacement: 'a >= 1', status: 'Survived' },
    { line: 2, column: 5, mutatorName: 'ConditionalExpression', replacement: 'true', status: 'NoCoverage' },
    { line: 1, column: 11, mutatorName: 'StringLiteral', replacement: '``', status: 'Survived' },
    { line: 2, column: 12, mutatorName: 'BlockStatement', replacement: '{}', status: 'Killed' },
    { line: 2, column: 5, mutatorName: 'ConditionalExpression', replacement: 'false', status: 'Timeout' },
  ]);

  it('takes survived and uncovered mutants, not killed or timed-out ones', () => {
    const s = survivorsOf([rep]);
    expect([...s.values()].map((m) => `${m.mutator} ${m.replacement}`).sort()).to.deep.equal([
      'ConditionalExpression true',
      'EqualityOperator a >= 1',
      'StringLiteral ``',
    ]);
  });

  it('an entry written by entryHead parses back to the same key, backticks in the replacement included', () => {
    const s = survivorsOf([rep]);
    const doc = `## \`m/a.ts\`\n\n${[...s.values()].map((m) => `${entryHead(m)}: equivalent: the same either way\n  \`\` ${m.original.trim()} \`\``).join('\n')}\n`;
    const { unlisted, stale } = compare(s, parseDoc(doc));
    expect(unlisted).to.deep.equal([]);
    expect(stale).to.deep.equal([]);
  });

  it('reports a survivor with no entry and an entry with no survivor', () => {
    const s = survivorsOf([rep]);
    const doc =
      '## `m/a.ts`\n\n- 2:5-6 EqualityOperator → `a >= 1`: equivalent: a is never 1\n  `if (a > 1) f();`\n- 9:1-2 BooleanLiteral → `false`: gap: no spec reads it\n  `b = true;`\n';
    const { unlisted, stale } = compare(s, parseDoc(doc));
    expect(unlisted.map((u) => `${u.line}:${u.column} ${u.mutator}`).sort()).to.deep.equal(['1:11 StringLiteral', '2:5 ConditionalExpression']);
    expect(stale.map((e) => e.key)).to.deep.equal([keyOf('m/a.ts', '9:1-2', 'BooleanLiteral', 'false')]);
  });

  it('refuses an entry without a kind, with an unknown kind, or listed twice, naming its line', () => {
    expect(() => parseDoc('## `m/a.ts`\n\n- 2:5-6 EqualityOperator → `a >= 1`: because\n')).to.throw(
      /:3: the why must start with one of equivalent, untestable, gap/,
    );
    expect(() => parseDoc('## `m/a.ts`\n- 2:5-6 EqualityOperator `a >= 1`\n')).to.throw(/:2: not an entry/);
    expect(() => parseDoc('## `m/a.ts`\n- 2:5-6 X → `y`: gap: not yet read\n  `y`\n- 2:5-6 X → `y`: gap: not yet read\n  `y`\n')).to.throw(/:4: listed twice/);
    expect(() => parseDoc('## `m/a.ts`\n- 2:5-6 X → `y`: gap: not yet read\n- 3:5-6 X → `y`: gap: not yet read\n')).to.throw(
      /:3: the mutated source line must be written under the entry/,
    );
  });

  it('counts TODO entries apart: parsed, but not an answer', () => {
    const e = parseDoc('## `m/a.ts`\n- 2:5-6 X → `y`: TODO\n  `y`\n');
    expect([...e.values()].map((v) => v.kind)).to.deep.equal(['TODO']);
  });

  it('rekey follows code that moved, to the nearest line reading the same; prune drops an entry with its source line', () => {
    const copy = 'if (a) f();';
    const lines = (n: number) => Array.from({ length: n }, (_, i) => (i === 2 || i === 9 ? copy : `x${i};`)).join('\n');
    const after = `y;\ny;\n${lines(12)}`; // two lines added on top: the copies at 3 and 10 are now at 5 and 12
    const at = (line: number) => report('m/a.ts', after, [{ line, column: 5, mutatorName: 'ConditionalExpression', replacement: 'true', status: 'Survived' }]);
    const doc = `## \`m/a.ts\`\n\n- 3:5-6 ConditionalExpression → \`true\`: equivalent: the first copy\n  \`${copy}\`\n- 9:1-2 X → \`y\`: gap: gone from the code\n  \`z\`\nend\n`;
    const now = survivorsOf([at(5), at(12)]);
    const { unlisted, stale } = compare(now, parseDoc(doc));
    expect(stale.map((e) => e.line)).to.deep.equal([3, 9]);
    const moved = rekey(doc, unlisted, stale);
    expect(moved.moved).to.equal(1);
    expect(moved.text).to.include('- 5:5-6 ConditionalExpression → `true`: equivalent: the first copy');
    const left = compare(now, parseDoc(moved.text));
    expect(left.unlisted.map((u) => u.line)).to.deep.equal([12]);
    const pruned = prune(moved.text, left.stale);
    expect(pruned).to.not.match(/9:1|`z`/);
    expect(pruned).to.include('- 5:5').and.include(copy).and.include('end');
  });

  it('an entry on a line whose code changed is stale and its mutant unlisted until re-keyed; a line cut short with … matches its start', () => {
    const long = `const first = ${'1 + '.repeat(40)}1;`;
    const src = `if (b) g();\nif (a) f();\n${long}\n`;
    const rep2 = report('m/a.ts', src, [
      { line: 1, column: 5, mutatorName: 'ConditionalExpression', replacement: 'true', status: 'Survived' },
      { line: 2, column: 5, mutatorName: 'ConditionalExpression', replacement: 'true', status: 'Survived' },
      { line: 3, column: 15, mutatorName: 'ArithmeticOperator', replacement: '1 - 1', status: 'Survived' },
    ]);
    const now = survivorsOf([rep2]);
    // The code above moved down one line: the entry for 1:5 now sits on the line of the other.
    const doc = `## \`m/a.ts\`\n\n- 1:5-6 ConditionalExpression → \`true\`: equivalent: a is always set\n  \`if (a) f();\`\n- 3:15-16 ArithmeticOperator → \`1 - 1\`: equivalent: never read\n  \`${long.slice(0, 60)}…\`\n`;
    const { unlisted, stale } = compare(now, parseDoc(doc));
    expect(
      stale.map((e) => e.line),
      'a why written for other code does not count',
    ).to.deep.equal([1]);
    expect(unlisted.map((u) => u.line).sort()).to.deep.equal([1, 2]);
    const moved = rekey(doc, unlisted, stale);
    expect(moved.moved).to.equal(1);
    const left = compare(now, parseDoc(moved.text));
    expect(left.stale).to.deep.equal([]);
    expect(
      left.unlisted.map((u) => `${u.line}:${u.column}`),
      'the other line still needs its own why',
    ).to.deep.equal(['1:5']);
  });

  it('a reference in a why follows the entry it names when rekey moves it; one to no entry is reported', () => {
    const src = 'x;\nif (a) f();\nif (b) g();\n';
    const now = survivorsOf([
      report('m/a.ts', src, [
        { line: 2, column: 5, mutatorName: 'ConditionalExpression', replacement: 'true', status: 'Survived' },
        { line: 3, column: 5, mutatorName: 'ConditionalExpression', replacement: 'true', status: 'Survived' },
      ]),
    ]);
    const doc =
      '## `m/a.ts`\n\n- 1:5-6 ConditionalExpression → `true`: equivalent: a is always set\n  `if (a) f();`\n' +
      '- 2:5-6 ConditionalExpression → `true`: equivalent: as 1:5, and b follows a (see 7:1)\n  `if (b) g();`\n';
    const entries = parseDoc(doc);
    const { unlisted, stale } = compare(now, entries);
    expect(danglingRefs(entries).map((d) => d.ref)).to.deep.equal(['7:1']);
    const moved = rekey(doc, unlisted, stale);
    expect(moved.moved).to.equal(2);
    expect(moved.text).to.include('- 3:5-6 ConditionalExpression → `true`: equivalent: as 2:5, and b follows a (see 7:1)');
    expect(compare(now, parseDoc(moved.text))).to.deep.equal({ unlisted: [], stale: [] });
  });

  it('tells apart mutants that start at the same place by where they end: one entry each', () => {
    const src = 'if (a && b) f();\n';
    const now = survivorsOf([
      report('m/a.ts', src, [
        { line: 1, column: 5, end: 11, mutatorName: 'ConditionalExpression', replacement: 'true', status: 'Survived' },
        { line: 1, column: 5, end: 6, mutatorName: 'ConditionalExpression', replacement: 'true', status: 'Survived' },
      ]),
    ]);
    expect([...now.values()].map((m) => spanOf(m))).to.deep.equal(['1:5-11', '1:5-6']);
    expect(spanOf({ line: 3, column: 9, endLine: 5, endColumn: 2 }), 'over several lines').to.equal('3:9-5:2');
    const one = '## `m/a.ts`\n\n- 1:5-11 ConditionalExpression → `true`: equivalent: f is idempotent\n  `if (a && b) f();`\n';
    expect(
      compare(now, parseDoc(one)).unlisted.map((u) => spanOf(u)),
      'the why for `a && b` says nothing of `a`',
    ).to.deep.equal(['1:5-6']);
    const both = one + '- 1:5-6 ConditionalExpression → `true`: equivalent: b implies a\n  `if (a && b) f();`\n';
    expect(compare(now, parseDoc(both))).to.deep.equal({ unlisted: [], stale: [] });
  });
});
