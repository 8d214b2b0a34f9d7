/**
 * Tasks per alloc: one allocation with K mock tasks (K = 10, 100, 1,000) added, every task
 * running, then destroyed, through a real client with real alloc dirs. Reports time per task at
 * each K; the figure is per-task(largest K) over per-task(10), measured in the same run, which
 * must not grow (ratio <= 1.5).
 */
import { randomUUID } from 'node:crypto';
import { createClient } from '../actors/client/client.ts';
import { shutdownMountHelper } from '../actors/allocdir/mounts.ts';
import type { Allocation, Task, TaskState } from '../model/types.ts';
import { snapshotWhere } from './lib/allocs.ts';
import { safeRemove, tempDir } from './lib/fsutil.ts';
import { NO_GC } from './lib/no-gc.ts';
import { ratioResult, type BenchOptions, type BenchResult } from './lib/results.ts';
import { now } from './lib/stats.ts';

/** One group of `k` mock tasks, each running for an hour (stopped by the destroy). */
function manyTaskAlloc(k: number): Allocation {
  const tasks: Task[] = Array.from({ length: k }, (_, i) => ({ name: `t${i}`, driver: 'mock_driver', config: { run_for: '1h' } }));
  return {
    id: randomUUID(),
    nodeId: 'node-1',
    jobId: 'bench',
    job: { id: 'bench', name: 'bench', type: 'service', taskGroups: [{ name: 'web', count: 1, tasks }] },
    taskGroup: 'web',
    desiredStatus: 'run',
    clientStatus: 'pending',
    allocModifyIndex: 1,
  };
}

/** Start + destroy of one k-task alloc; returns milliseconds for each phase. */
async function once(k: number, opts: BenchOptions): Promise<{ startMs: number; destroyMs: number }> {
  const dir = tempDir(`p12-${k}`);
  const client = createClient({ dataDir: dir, ...NO_GC });
  const errs = client.bus.of('client.error').subscribe((m) => opts.log(`  [p12] client.error: ${JSON.stringify(m)}`));
  try {
    const t0 = now();
    const r = client.addAlloc(manyTaskAlloc(k));
    // The machine's 'running' state is entered before the tasks start: wait for all k task states.
    const allRunning = (ts: Record<string, TaskState> | undefined) => Object.values(ts ?? {}).filter((t) => t.state === 'running').length;
    await snapshotWhere(r, (snap) => allRunning((snap.context as { taskStates?: Record<string, TaskState> }).taskStates) === k);
    const t1 = now();
    const running = allRunning(r.alloc().taskStates);
    if (running !== k)
      throw new Error(`k=${k}: alloc running with ${running} tasks running: ${JSON.stringify({ ...r.alloc(), job: undefined }).slice(0, 600)}`);
    await r.destroy();
    const t2 = now();
    return { startMs: t1 - t0, destroyMs: t2 - t1 };
  } finally {
    errs.unsubscribe();
    await client.shutdown();
    await shutdownMountHelper();
    await safeRemove(dir);
  }
}

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  const counts = opts.quick ? [10, 100, 300] : [10, 100, 1000];
  await once(10, opts); // warm-up (JIT, first client), discarded
  const per: Record<number, { startMs: number; destroyMs: number; perTaskMs: number }> = {};
  for (const k of counts) {
    opts.log(`P12 tasks per alloc: k=${k}`);
    const r = await once(k, opts);
    per[k] = { ...r, perTaskMs: (r.startMs + r.destroyMs) / k };
  }
  const small = per[counts[0]!]!;
  const big = per[counts[counts.length - 1]!]!;
  return [
    ratioResult({
      id: 'P12',
      name: `tasks per alloc, per-task ms at k=${counts[counts.length - 1]} vs k=${counts[0]}`,
      unit: 'ms/task',
      value: big.perTaskMs,
      floor: small.perTaskMs,
      better: 'lower',
      limit: 1.5,
      details: { per },
    }),
  ];
}
