/** P2's measured part (run with --expose-gc): heap per running idle allocation, and heap return. */
import { createActor } from 'xstate';
import { createClient } from '../actors/client/client.ts';
import { shutdownMountHelper } from '../actors/allocdir/mounts.ts';
import type { AllocRunner } from '../actors/client/types.ts';
import { mockAlloc, waitStopped, waitTasksRunning } from './lib/allocs.ts';
import { childDone, childPayload } from './lib/proc.ts';
import { five } from './lib/five-machine.ts';
import { gcHeap, sleep } from './lib/stats.ts';
import { NO_GC } from './lib/no-gc.ts';

const { mode, n, dir } = childPayload<{ mode: 'berth' | 'floor'; n: number; dir: string }>();

if (mode === 'floor') {
  const start = await gcHeap();
  const actors = Array.from({ length: n }, (_, i) => {
    const a = createActor(five, { id: `alloc-${i}` }).start();
    a.send({ type: 'next' });
    a.send({ type: 'next' });
    return a;
  });
  const mid = await gcHeap();
  for (const a of actors) a.stop();
  childDone({ perAllocBytes: (mid - start) / n, start, mid, alive: actors.length });
} else {
  const client = createClient({ dataDir: dir, ...NO_GC });
  // Warm up: a batch through the whole lifecycle first, so lazily created module state and the
  // JIT's optimised code (1.3 MB after 500 allocs, all of it 'code' in a heap-snapshot diff) are
  // already in `start`: the heap-return check is about leaks, not code caches.
  const warm = Array.from({ length: Math.min(1000, Math.max(100, Math.round(n / 10))) }, () => mockAlloc());
  const wr = warm.map((a) => client.addAlloc(a));
  await Promise.all(wr.map(waitTasksRunning));
  for (const a of warm) client.updateAlloc({ ...a, desiredStatus: 'stop', allocModifyIndex: 2 });
  await Promise.all(wr.map(waitStopped));
  await Promise.all(wr.map((r) => r.destroy()));
  wr.length = 0;
  await sleep(100);
  const start = await gcHeap();
  const allocs = Array.from({ length: n }, () => mockAlloc());
  let runners: AllocRunner[] = allocs.map((a) => client.addAlloc(a));
  await Promise.all(runners.map(waitTasksRunning));
  await sleep(200); // idle: pending store writes flushed
  const mid = await gcHeap();
  for (const a of allocs) client.updateAlloc({ ...a, desiredStatus: 'stop', allocModifyIndex: 2 });
  await Promise.all(runners.map(waitStopped));
  await Promise.all(runners.map((r) => r.destroy()));
  runners = [];
  allocs.length = 0;
  await sleep(200);
  const end = await gcHeap();
  await client.shutdown();
  await shutdownMountHelper();
  childDone({ perAllocBytes: (mid - start) / n, start, mid, end, returnRatio: end / start });
}
