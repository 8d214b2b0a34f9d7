/** Plain-text table of results. @module */
import type { BenchResult } from './results.ts';

/** A number in 3-4 significant figures, `-` when not finite. */
export function fmt(n: number): string {
  if (!Number.isFinite(n)) return '-';
  const a = Math.abs(n);
  if (a >= 100_000) return n.toExponential(2);
  if (a >= 100) return n.toFixed(0);
  if (a >= 10) return n.toFixed(1);
  if (a >= 1) return n.toFixed(2);
  if (a === 0) return '0';
  return n.toPrecision(3);
}

/** Renders `results` as an aligned text table. */
export function renderTable(results: readonly BenchResult[]): string {
  const head = ['id', 'benchmark', 'value', 'floor', 'unit', 'ratio', 'target', 'met'];
  const rows = results.map((r) => [
    r.id,
    r.name,
    fmt(r.value),
    fmt(r.floor),
    r.unit,
    fmt(r.ratio),
    r.target,
    r.details?.skipped ? 'skip' : r.met ? 'yes' : 'NO',
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i >= 2 && i <= 5 && i !== 4 ? c.padStart(w[i]!) : c.padEnd(w[i]!)))
      .join('  ')
      .trimEnd();
  return [line(head), w.map((n) => '-'.repeat(n)).join('  '), ...rows.map(line)].join('\n');
}
