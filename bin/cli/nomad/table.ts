/**
 * nomad's output shapes: `Key = Value` blocks and column tables.
 * @module
 */

/** `Key  = Value` lines, keys padded to one width. */
export function kv(rows: Array<[string, unknown]>): string {
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  = ${v === undefined || v === null || v === '' ? '<none>' : String(v)}`).join('\n');
}

/** A table with a header row, columns padded to their widest cell. */
export function table(head: string[], rows: unknown[][]): string {
  const cells = [head, ...rows.map((r) => r.map((c) => (c === undefined || c === null ? '' : String(c))))];
  const widths = head.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** Nomad's short id: the first 8 characters. */
export const short = (id: unknown): string => String(id ?? '').slice(0, 8);

/** A Unix-nanosecond time as nomad prints it. */
export function nanoTime(ns: unknown): string {
  const n = Number(ns);
  if (!n) return '<none>';
  return new Date(n / 1e6)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
}
