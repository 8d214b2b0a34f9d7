/**
 * Whether a client keeps anything per destroyed alloc (P2's heap return, as a growth curve):
 * a warm-up round, then three rounds of N mock allocs run, stopped and destroyed in one client,
 * printing the heap above its post-warm-up level after each. A leak grows with the rounds; a
 * fixed amount (code, caches) does not. `node --expose-gc --import tsx bench/p2-retention.ts [N]`
 * (default 1,000).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../actors/client/client.ts';
import { mockAlloc, waitStopped, waitTasksRunning } from './lib/allocs.ts';
import { gcHeap, sleep } from './lib/stats.ts';
import { NO_GC } from './lib/no-gc.ts';
const dir = mkdtempSync(join(tmpdir(), 'berth-p2-retention-'));
const client = createClient({ dataDir: dir, ...NO_GC });
async function round(n: number) {
  const allocs = Array.from({ length: n }, () => mockAlloc());
  let rs = allocs.map((a) => client.addAlloc(a));
  await Promise.all(rs.map(waitTasksRunning));
  for (const a of allocs) client.updateAlloc({ ...a, desiredStatus: 'stop', allocModifyIndex: 2 });
  await Promise.all(rs.map(waitStopped));
  await Promise.all(rs.map((r) => r.destroy()));
  rs = [];
  await sleep(200);
}
await round(500);
const h0 = await gcHeap();
const N = Number(process.argv[2] ?? 1000);
for (let i = 0; i < 3; i++) {
  await round(N);
  const h = await gcHeap();
  console.log(`after round ${i + 1} of ${N}: +${((h - h0) / 1024).toFixed(0)} KB (${((h - h0) / ((i + 1) * N)).toFixed(0)} B per destroyed alloc)`);
}
await client.shutdown();
rmSync(dir, { recursive: true, force: true });
