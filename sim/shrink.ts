/**
 * Shrinking: from a failing op list, a smaller one that still breaks the same invariant. Chunks
 * of ops are removed (delta debugging), then tasks and watch links of the remaining adds. Each
 * entity draws from its own random stream, so what is left behaves as it did.
 * @module
 */
import type { Violation } from './invariants.ts';
import type { Op } from './ops.ts';
import { runSim, type SimOptions } from './world.ts';

/** Options of {@link shrink}. */
export interface ShrinkOptions extends Omit<SimOptions, 'ops' | 'trace'> {
  ops: Op[];
  /** The invariant to keep breaking. */
  invariant: Violation['invariant'];
  /** Most runs to spend (default 400). */
  budget?: number;
}

/** Returns the smallest failing op list found, and the runs it took. */
export async function shrink(o: ShrinkOptions): Promise<{ ops: Op[]; runs: number }> {
  let runs = 0;
  const budget = o.budget ?? 400;
  const fails = async (ops: Op[]) => {
    runs++;
    const r = await runSim({ ...o, ops, trace: false });
    return r.violations.some((v) => v.invariant === o.invariant);
  };
  let cur = o.ops;
  let n = 2;
  while (cur.length >= 2 && runs < budget) {
    const size = Math.ceil(cur.length / n);
    let removed = false;
    for (let i = 0; i < cur.length && runs < budget; i += size) {
      const cand = [...cur.slice(0, i), ...cur.slice(i + size)];
      if (await fails(cand)) {
        cur = cand;
        n = Math.max(n - 1, 2);
        removed = true;
        break;
      }
    }
    if (!removed) {
      if (size === 1) break;
      n = Math.min(cur.length, n * 2);
    }
  }
  // Simplify what is left: fewer tasks, fewer watch links.
  for (let i = 0; i < cur.length && runs < budget; i++) {
    const op = cur[i]!;
    if (op.op !== 'add') continue;
    const tries: Op[] = [];
    for (let t = op.spec.tasks.length - 1; t >= 1; t--) tries.push({ ...op, spec: { ...op.spec, tasks: op.spec.tasks.filter((_, j) => j !== t) } });
    if (op.preempted) tries.push((({ preempted: _p, ...rest }) => rest)(op) as Op);
    if (op.prev) tries.push((({ prev: _p, ...rest }) => rest)(op) as Op);
    for (const cand of tries) {
      if (runs >= budget) break;
      const list = cur.map((x, j) => (j === i ? cand : x));
      if (await fails(list)) {
        cur = list;
        i--; // try this op again, smaller
        break;
      }
    }
  }
  return { ops: cur, runs };
}
