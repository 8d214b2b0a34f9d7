/**
 * The documented results table (docs/performance.md, between two markers) from one
 * `bench/results.json`: `npm run bench -- --table` after a full run. @module
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fmt } from './table.ts';

/** The start and end markers of the generated table in the doc. */
export const TABLE_BEGIN = '<!-- bench-table:begin (npm run bench -- --table) -->';
export const TABLE_END = '<!-- bench-table:end -->';

/** `bench/results.json` as run.ts writes it (non-finite numbers as null). */
export interface ResultsDoc {
  machine: { cpus: number; node: string; quick: boolean; platform: string; root: boolean; date: string; totalSeconds: number };
  benchmarks: Array<{
    id: string;
    name: string;
    unit: string;
    value: number | null;
    floor: number | null;
    ratio: number | null;
    target: string;
    met: boolean;
    details?: Record<string, unknown>;
  }>;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const num = (x: number | null, unit = '') => (x === null ? '-' : `${fmt(x)}${unit && unit !== '-' ? ` ${unit}` : ''}`);

/** The run's one-line provenance and its table, in Markdown. */
export function markdownTable(doc: ResultsDoc): string {
  const m = doc.machine;
  const date = m.date.replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC');
  const head =
    `From \`npm run bench${m.quick ? ' -- --quick' : ''}\` of ${date}, one run of ${Math.round(m.totalSeconds)} s ` +
    `(${m.cpus} cores, Node ${m.node}, ${m.platform}, ${m.root ? 'as root' : 'not root'}).`;
  const rows = doc.benchmarks.map((b) => {
    const skippedWhy = b.details?.skipped;
    const met = typeof skippedWhy === 'string' ? `skipped: ${skippedWhy}` : b.details?.error ? 'error' : b.met ? 'yes' : 'no';
    return `| ${cell(b.id)} | ${cell(b.name)} | ${num(b.value, b.unit)} | ${num(b.floor, b.unit)} | ${num(b.ratio)} | ${cell(b.target)} | ${cell(met)} |`;
  });
  return [head, '', '| id | benchmark | value | floor | ratio | target | met |', '| --- | --- | --- | --- | --- | --- | --- |', ...rows].join('\n');
}

/** The README's markers around its summary of the same run. */
export const SUMMARY_BEGIN = '<!-- bench-summary:begin (npm run bench -- --table) -->';
export const SUMMARY_END = '<!-- bench-summary:end -->';

/**
 * The README's summary of one run: a row per figure (P1, P2, ...) with its first row's ratio and
 * target, and how many of its rows met their targets; the full table and the analysis of every
 * miss live in docs/performance.md.
 */
export function markdownSummary(doc: ResultsDoc): string {
  const m = doc.machine;
  const date = m.date.replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC');
  const ids = [...new Set(doc.benchmarks.map((b) => b.id))];
  const rows = ids.map((id) => {
    const all = doc.benchmarks.filter((b) => b.id === id);
    const first = all[0]!;
    const met = all.filter((b) => b.met).length;
    const failed = all.some((b) => b.details?.error);
    return `| ${cell(id)} | ${cell(first.name)} | ${num(first.value, first.unit)} | ${num(first.ratio)} | ${cell(first.target)} | ${failed ? 'error' : `${met} of ${all.length}`} |`;
  });
  return [
    `\`npm run bench\`${m.quick ? ' (quick)' : ''} of ${date} (${Math.round(m.totalSeconds)} s, ${m.cpus} cores, ${m.root ? 'as root' : 'not root'}): each figure's first row;`,
    'every row and what stands between each miss and its target: [docs/performance.md](docs/performance.md).',
    '',
    '| id | figure (first row) | value | ratio | target | rows met |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/** Replaces what stands between the markers in `text` with `table`. Throws without both markers. */
export function replaceTable(text: string, table: string, begin = TABLE_BEGIN, end = TABLE_END): string {
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  if (a < 0 || b < a) throw new Error(`no "${begin}" ... "${end}" markers to put the table between`);
  return `${text.slice(0, a + begin.length)}\n\n${table}\n\n${text.slice(b)}`;
}

/**
 * Rewrites the table in `docFile` from `resultsFile` (and the summary in `readmeFile`, when
 * given), formatted as the repo's prettier does. Returns the table.
 */
export async function updateDocTable(resultsFile: string, docFile: string, readmeFile?: string): Promise<string> {
  const doc = JSON.parse(readFileSync(resultsFile, 'utf8')) as ResultsDoc;
  const table = markdownTable(doc);
  const prettier = await import('prettier');
  const write = async (file: string, text: string) => {
    const options = (await prettier.resolveConfig(file)) ?? {};
    writeFileSync(file, await prettier.format(text, { ...options, filepath: file }));
  };
  // Both are checked before either is written: no half-updated pair.
  const docText = replaceTable(readFileSync(docFile, 'utf8'), table);
  const readmeText = readmeFile ? replaceTable(readFileSync(readmeFile, 'utf8'), markdownSummary(doc), SUMMARY_BEGIN, SUMMARY_END) : undefined;
  await write(docFile, docText);
  if (readmeFile && readmeText !== undefined) await write(readmeFile, readmeText);
  return table;
}
