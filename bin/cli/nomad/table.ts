/**
 * nomad's output shapes: `Key = Value` blocks and column tables.
 * @module
 */

/** `Key  = Value` lines, keys padded to one width. */
export function kv(rows: Array<[string, unknown]>): string {
  const w = Math.max(...rows.map(([k]) => k.length));
  // columnize with nomad's glue " = ": the key padded to the widest, then " = ".
  return rows.map(([k, v]) => `${k.padEnd(w)} = ${v === undefined || v === null || v === '' ? '<none>' : String(v)}`).join('\n');
}

/**
 * A table with a header row, columns padded to their widest cell: nomad's `formatList`, which
 * prints an empty cell as `<none>` (`empty: ''` for its `formatListWithSpaces`).
 */
export function table(head: string[], rows: unknown[][], opts: { empty?: string } = {}): string {
  const empty = opts.empty ?? '<none>';
  const cells = [head, ...rows.map((r) => r.map((c) => (c === undefined || c === null || c === '' ? empty : String(c))))];
  const widths = head.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  // As columnize: a row whose last cells are empty ends at its last text, with no trailing blanks.
  return cells
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Nomad's short id: the first 8 characters. */
export const short = (id: unknown): string => String(id ?? '').slice(0, 8);

/** A Unix-nanosecond time as nomad's `formatUnixNanoTime` prints it (ISO 8601, here in UTC); `<none>` for none. */
export function nanoTime(ns: unknown): string {
  const n = Number(ns);
  if (!n) return '<none>';
  return isoTime(n / 1e6);
}

/** A time (ms since the epoch) as nomad's `formatTime`: `2006-01-02T15:04:05Z`. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * Nomad's `prettyTimeDiff` of a Unix-nanosecond time and `nowMs`: the two largest non-zero
 * periods of years, months (30 days), days, hours, minutes and seconds, then `ago` or `from now`
 * (`1h5s ago`, `3m12s from now`, `0s ago`); empty for no time.
 */
export function prettyTimeDiff(ns: unknown, nowMs: number): string {
  const n = Number(ns);
  if (!n) return '';
  const then = Math.round(n / 1e9);
  const now = Math.round(nowMs / 1000);
  let u = Math.abs(now - then);
  const suffix = now >= then ? 'ago' : 'from now';
  const parts: string[] = [];
  const take = (mod: number, unit: string) => {
    const v = mod ? u % mod : u;
    if (v > 0) parts.unshift(`${v}${unit}`);
    u = mod ? Math.floor(u / mod) : 0;
  };
  take(60, 's');
  take(60, 'm');
  take(24, 'h');
  take(30, 'd');
  take(12, 'mo');
  take(0, 'y');
  return `${parts.length ? parts.slice(0, 2).join('') : '0s'} ${suffix}`;
}

/** go-humanize's `IBytes`, which nomad prints sizes with: `0 B`, `300 MiB`, `1.5 GiB`. */
export function iBytes(bytes: number): string {
  if (bytes < 10) return `${bytes} B`;
  const sizes = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  const e = Math.floor(Math.log(bytes) / Math.log(1024));
  const val = Math.floor((bytes / 1024 ** e) * 10 + 0.5) / 10;
  return val < 10 ? `${val.toFixed(1)} ${sizes[e]}` : `${val.toFixed(0)} ${sizes[e]}`;
}

/**
 * How nomad's `-verbose` shows ids and times: whole ids and absolute times, else short ids and
 * times relative to `now()` (asked at each time shown).
 */
export function verboseFormat(verbose: boolean, now: () => number): { id(v: unknown): unknown; when(ns: unknown): string } {
  return {
    id: (v) => (verbose ? v : short(v)),
    when: (ns) => (verbose ? nanoTime(ns) : prettyTimeDiff(ns, now())),
  };
}
