/**
 * Start and destroy time of one alloc by its task count (mock driver, real alloc dirs), to show
 * both stay linear: `npx tsx bench/tasks-per-alloc.ts 10 100 250 500 1000`. Prints ms in all and
 * per task for each count.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../actors/client/client.ts';
import { makeAlloc, mockTask } from '../spec/support/fixtures.ts';

const counts = process.argv.slice(2).map(Number);
for (const n of counts.length ? counts : [10, 100, 250, 500]) {
  const dataDir = mkdtempSync(join(tmpdir(), 'berth-tpa-'));
  const client = createClient({ dataDir });
  try {
    const alloc = makeAlloc(Array.from({ length: n }, (_, i) => mockTask(`t${i}`, { run_for: '1h' })));
    const t0 = performance.now();
    const r = client.addAlloc(alloc);
    await r.waitFor('running');
    // Every task started, not just the alloc's first.
    await new Promise<void>((resolve) => {
      const done = () => Object.values(r.alloc().taskStates ?? {}).filter((t) => t.state === 'running').length === n;
      if (done()) return resolve();
      const sub = client.bus.of('task.state').subscribe(() => {
        if (done()) {
          sub.unsubscribe();
          resolve();
        }
      });
    });
    const t1 = performance.now();
    await r.destroy();
    const t2 = performance.now();
    console.log(
      JSON.stringify({
        tasks: n,
        startMs: Math.round(t1 - t0),
        destroyMs: Math.round(t2 - t1),
        startPerTaskMs: +((t1 - t0) / n).toFixed(2),
        destroyPerTaskMs: +((t2 - t1) / n).toFixed(2),
      }),
    );
  } finally {
    await client.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
