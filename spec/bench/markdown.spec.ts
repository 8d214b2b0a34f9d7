import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  markdownSummary,
  markdownTable,
  replaceTable,
  SUMMARY_BEGIN,
  SUMMARY_END,
  TABLE_BEGIN,
  TABLE_END,
  updateDocTable,
  type ResultsDoc,
} from '../../bench/lib/markdown.ts';

const doc: ResultsDoc = {
  machine: { cpus: 2, node: 'v20.20.2', quick: false, platform: 'linux 6.18', root: true, date: '2026-12-03T15:20:41.123Z', totalSeconds: 612.4 },
  benchmarks: [
    { id: 'P1', name: 'lifecycle x10000, root', unit: 'ms', value: 51400, floor: 30400, ratio: 1.6908, target: 'ratio <= 2 (lower is better)', met: true },
    { id: 'P6', name: 'migration vs `tar | tar`', unit: 'MB/s', value: 97.7, floor: 169, ratio: 0.578, target: 'ratio >= 0.8 (higher is better)', met: false },
    {
      id: 'P8',
      name: 'cgroups',
      unit: '-',
      value: null,
      floor: null,
      ratio: null,
      target: 'skipped: not root',
      met: false,
      details: { skipped: 'not root' },
    },
  ],
};

describe('bench: the documented results table', () => {
  it("states the run's date, size and machine, one row per figure, pipes escaped", () => {
    const md = markdownTable(doc);
    expect(md).to.contain('From `npm run bench` of 2026-12-03 15:20 UTC, one run of 612 s (2 cores, Node v20.20.2, linux 6.18, as root).');
    expect(md).to.contain('| P1 | lifecycle x10000, root | 51400 ms | 30400 ms | 1.69 | ratio <= 2 (lower is better) | yes |');
    expect(md).to.contain('| P6 | migration vs `tar \\| tar` | 97.7 MB/s | 169 MB/s | 0.578 | ratio >= 0.8 (higher is better) | no |');
    expect(md).to.contain('| P8 | cgroups | - | - | - | skipped: not root | skipped: not root |');
    expect(markdownTable({ ...doc, machine: { ...doc.machine, quick: true } })).to.contain('`npm run bench -- --quick`');
  });

  it('replaces only what stands between the markers, and refuses a doc without them', () => {
    const text = `# Perf\n\nbefore\n\n${TABLE_BEGIN}\n\nold table\n\n${TABLE_END}\n\nafter\n`;
    const out = replaceTable(text, 'NEW');
    expect(out).to.equal(`# Perf\n\nbefore\n\n${TABLE_BEGIN}\n\nNEW\n\n${TABLE_END}\n\nafter\n`);
    expect(replaceTable(out, 'NEWER')).to.contain(`${TABLE_BEGIN}\n\nNEWER\n\n${TABLE_END}`);
    expect(() => replaceTable('# no markers\n', 'NEW')).to.throw(/markers/);
  });

  it('rewrites the doc file from a results file, formatted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-md-'));
    try {
      const results = join(dir, 'results.json');
      const file = join(dir, 'perf.md');
      writeFileSync(results, JSON.stringify(doc));
      writeFileSync(file, `# Perf\n\n${TABLE_BEGIN}\n\nold\n\n${TABLE_END}\n\nprose stays\n`);
      await updateDocTable(results, file);
      const text = readFileSync(file, 'utf8');
      expect(text).to.not.contain('old');
      expect(text).to.contain('prose stays');
      // prettier pads the table's columns
      expect(text).to.match(/\| P1 {2}\| lifecycle x10000, root/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('summarises each figure for the README (first row, rows met, a failed figure as error) and writes both files or neither', async () => {
    const two: ResultsDoc = {
      ...doc,
      benchmarks: [
        ...doc.benchmarks,
        { id: 'P1', name: 'lifecycle x10000, non-root', unit: 'ms', value: 56000, floor: 14000, ratio: 4, target: 'ratio <= 2 (lower is better)', met: false },
        { id: 'P11', name: 'restore', unit: '-', value: null, floor: null, ratio: null, target: 'error: boom', met: false, details: { error: 'boom' } },
      ],
    };
    const md = markdownSummary(two);
    expect(md).to.contain('`npm run bench` of 2026-12-03 15:20 UTC (612 s, 2 cores, as root)');
    expect(md).to.contain('| P1 | lifecycle x10000, root | 51400 ms | 1.69 | ratio <= 2 (lower is better) | 1 of 2 |');
    expect(md).to.contain('| P6 | migration vs `tar \\| tar` | 97.7 MB/s | 0.578 | ratio >= 0.8 (higher is better) | 0 of 1 |');
    expect(md).to.contain('| P11 | restore | - | - | error: boom | error |');
    expect(md.match(/^\| P1 \|/gm)).to.have.length(1);

    const dir = mkdtempSync(join(tmpdir(), 'berth-md-'));
    try {
      const results = join(dir, 'results.json');
      const file = join(dir, 'perf.md');
      const readme = join(dir, 'README.md');
      writeFileSync(results, JSON.stringify(two));
      writeFileSync(file, `# Perf\n\n${TABLE_BEGIN}\n\nold\n\n${TABLE_END}\n`);
      writeFileSync(readme, '# berth\n\nno markers here\n');
      let error: unknown;
      await updateDocTable(results, file, readme).catch((e) => (error = e));
      expect(String(error)).to.match(/bench-summary:begin/);
      expect(readFileSync(file, 'utf8'), 'the doc is left as it was').to.contain('old');
      writeFileSync(readme, `# berth\n\n${SUMMARY_BEGIN}\n${SUMMARY_END}\n\nmore\n`);
      await updateDocTable(results, file, readme);
      expect(readFileSync(readme, 'utf8')).to.match(/\| P11 +\| restore/);
      expect(readFileSync(readme, 'utf8')).to.contain('more');
      expect(readFileSync(file, 'utf8')).to.not.contain('old');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
