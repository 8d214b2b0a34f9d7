/**
 * One worker process of `runSeeds` (sim/parallel.ts): is sent its share of the seeds, sends each
 * seed's result as it ends and, last, the chart transitions its runs took, then exits.
 * @module
 */
import { Coverage } from './coverage.ts';
import type { SeedMessage, SeedWork } from './parallel.ts';
import { releaseSimDataDir, runSim } from './world.ts';

const post = (m: SeedMessage) => new Promise<void>((resolve, reject) => process.send!(m, (err: Error | null) => (err ? reject(err) : resolve())));

process.once('message', (work: SeedWork) => {
  void (async () => {
    const coverage = work.coverage ? new Coverage() : undefined;
    try {
      for (const seed of work.seeds) {
        const r = await runSim({ seed, trace: false, ...(coverage ? { inspect: coverage.observe } : {}) });
        await post({ kind: 'seed', seed, violations: r.violations, steps: r.steps });
      }
      await post({ kind: 'done', counts: coverage ? [...coverage.counts] : [] });
    } finally {
      releaseSimDataDir();
      process.disconnect();
    }
  })();
});
