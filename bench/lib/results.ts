/** The result records of `bench/results.json`. @module */

/** One reported figure. */
export interface BenchResult {
  id: string;
  name: string;
  /** Unit of `value` and `floor`. */
  unit: string;
  value: number;
  floor: number;
  /** value / floor. */
  ratio: number;
  /** Human-readable target, saying which way is better, e.g. "ratio <= 2.0". */
  target: string;
  met: boolean;
  /** Anything else worth keeping (sub-measurements, reasons). */
  details?: Record<string, unknown>;
}

/** A benchmark's options: quick or full size, plus per-benchmark overrides from the CLI. */
export interface BenchOptions {
  quick: boolean;
  /** `--p1-n 2000` arrives as `{ 'p1-n': '2000' }`. */
  args: Record<string, string>;
  log: (line: string) => void;
}

/** Numeric option `name`, or the quick/full default. */
export function size(opts: BenchOptions, name: string, quick: number, full: number): number {
  const v = opts.args[name];
  if (v !== undefined) {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name}: expected a positive number, got ${JSON.stringify(v)}`);
    return n;
  }
  return opts.quick ? quick : full;
}

/** Builds a result; `better` says which way the ratio is good, `limit` the target on the ratio. */
export function ratioResult(
  r: Omit<BenchResult, 'ratio' | 'target' | 'met'> & { better: 'lower' | 'higher'; limit: number; extraTarget?: string; extraMet?: boolean },
): BenchResult {
  const { better, limit, extraTarget, extraMet, ...rest } = r;
  const ratio = r.floor > 0 ? r.value / r.floor : NaN;
  const ratioMet = better === 'lower' ? ratio <= limit : ratio >= limit;
  return {
    ...rest,
    ratio,
    target: `ratio ${better === 'lower' ? '<=' : '>='} ${limit} (${better} is better)${extraTarget ? `; ${extraTarget}` : ''}`,
    met: ratioMet && (extraMet ?? true),
  };
}

/** A result whose target is an absolute bound on `value` (ratio still reported). */
export function absoluteResult(
  r: Omit<BenchResult, 'ratio' | 'target' | 'met'> & { better: 'lower' | 'higher'; limit: number; extraTarget?: string; extraMet?: boolean },
): BenchResult {
  const { better, limit, extraTarget, extraMet, ...rest } = r;
  const ratio = r.floor > 0 ? r.value / r.floor : NaN;
  const valueMet = better === 'lower' ? r.value <= limit : r.value >= limit;
  return {
    ...rest,
    ratio,
    target: `value ${better === 'lower' ? '<=' : '>='} ${limit} ${r.unit} (${better} is better)${extraTarget ? `; ${extraTarget}` : ''}`,
    met: valueMet && (extraMet ?? true),
  };
}

/** A benchmark that could not run here (reported, never silently dropped). */
export function skipped(id: string, name: string, reason: string): BenchResult {
  return { id, name, unit: '-', value: NaN, floor: NaN, ratio: NaN, target: `skipped: ${reason}`, met: false, details: { skipped: reason } };
}
