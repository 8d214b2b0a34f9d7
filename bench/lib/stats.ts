/** Timing and summary statistics for the benchmarks. @module */

/** Milliseconds since an arbitrary origin (monotonic). */
export const now = (): number => performance.now();

/** Runs `fn` and returns its result and wall time in ms. */
export async function timed<T>(fn: () => Promise<T> | T): Promise<{ value: T; ms: number }> {
  const t0 = now();
  const value = await fn();
  return { value, ms: now() - t0 };
}

/** The q-quantile (0..1) of `xs`, nearest-rank. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1));
  return s[i]!;
}

export const median = (xs: readonly number[]) => quantile(xs, 0.5);
export const p99 = (xs: readonly number[]) => quantile(xs, 0.99);
export const min = (xs: readonly number[]) => Math.min(...xs);

/** Yields to the event loop once (macrotask). */
export const tick = () => new Promise<void>((r) => setImmediate(r));

/** Sleeps `ms` on the real clock. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Forces full GCs (needs --expose-gc) and returns heapUsed in bytes. */
export async function gcHeap(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 4; i++) {
    gc();
    await tick();
  }
  gc();
  return process.memoryUsage().heapUsed;
}
