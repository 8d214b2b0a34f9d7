/**
 * `npm run sim -- --real --seeds N [--from S] | --seed S`: randomized schedules on real processes.
 * @module
 */
import { runReal } from './schedule.ts';

/** Runs schedules one after another; returns the exit code. */
export async function runRealCli(o: { seeds: number; from: number; seed?: number }): Promise<number> {
  const seeds = o.seed !== undefined ? [o.seed] : Array.from({ length: o.seeds }, (_, i) => o.from + i);
  const t0 = performance.now();
  let bad = 0;
  const kinds = new Map<string, number>();
  for (const s of seeds) {
    const r = await runReal(s);
    kinds.set(r.kind, (kinds.get(r.kind) ?? 0) + 1);
    if (r.violations.length) {
      bad++;
      process.stdout.write(`seed ${s} (${r.kind}):\n  ${r.violations.join('\n  ')}\n`);
    }
  }
  const secs = (performance.now() - t0) / 1000;
  process.stdout.write(
    `${seeds.length} real schedules in ${secs.toFixed(1)} s (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}): ${bad} with violations\n`,
  );
  return bad ? 1 : 0;
}
