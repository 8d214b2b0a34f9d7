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

/** Replaces what stands between the markers in `text` with `table`. Throws without both markers. */
export function replaceTable(text: string, table: string): string {
  const a = text.indexOf(TABLE_BEGIN);
  const b = text.indexOf(TABLE_END);
  if (a < 0 || b < a) throw new Error(`no "${TABLE_BEGIN}" ... "${TABLE_END}" markers to put the table between`);
  return `${text.slice(0, a + TABLE_BEGIN.length)}\n\n${table}\n\n${text.slice(b)}`;
}

/** Rewrites the table in `docFile` from `resultsFile`, formatted as the repo's prettier does. Returns the table. */
export async function updateDocTable(resultsFile: string, docFile: string): Promise<string> {
  const doc = JSON.parse(readFileSync(resultsFile, 'utf8')) as ResultsDoc;
  const table = markdownTable(doc);
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(docFile)) ?? {};
  const text = await prettier.format(replaceTable(readFileSync(docFile, 'utf8'), table), { ...options, filepath: docFile });
  writeFileSync(docFile, text);
  return table;
}
