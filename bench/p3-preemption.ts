/**
 * P3, preemption wake-up: a preemptor waiting on K local victims (K = 10, 100, 1,000); the time
 * from the last victim's terminal broadcast to the preemptor entering `running`, median and p99
 * over R rounds, victims stopped one after another and all in the same tick. Floor: the same hop
 * through bare BehaviorSubjects. Also checks that no local watcher schedules a timer.
 * Runs in a child (as `nobody` when root, so no secret mounts) on a tmpfs data dir when root.
 */
import { chownSync } from 'node:fs';
import { mountTmpfsDir, safeRemove, tempDir } from './lib/fsutil.ts';
import { runNodeScript } from './lib/proc.ts';
import { absoluteResult, size, type BenchOptions, type BenchResult } from './lib/results.ts';
import { median, p99 } from './lib/stats.ts';

interface ChildOut {
  samples: number[];
  floors: number[];
  watcherTimers: string[];
  watcherTimerCount: number;
}

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  const ks = (opts.args['p3-k'] ?? (opts.quick ? '300' : '10,100,1000')).split(',').map(Number);
  const rounds = size(opts, 'p3-rounds', 2, 20);
  const isRoot = process.geteuid?.() === 0;
  const out: BenchResult[] = [];
  for (const k of ks) {
    for (const mode of ['sequential', 'same-tick'] as const) {
      const dir = tempDir('p3');
      try {
        if (isRoot) {
          await mountTmpfsDir(dir, 2048);
          chownSync(dir, 65534, 65534);
        }
        const r = await runNodeScript<ChildOut>(
          'p3-child.ts',
          { k, rounds, mode, dir },
          {
            ...(isRoot ? { asUser: { uid: 65534, gid: 65534 } } : {}),
            onLog: (l) => opts.log(`  [p3] ${l}`),
            timeoutMs: 10 * 60_000,
          },
        );
        const med = median(r.samples);
        const floorMed = median(r.floors);
        out.push(
          absoluteResult({
            id: 'P3',
            name: `wake-up K=${k}, ${mode} (median)`,
            unit: 'ms',
            value: med,
            floor: floorMed,
            better: 'lower',
            limit: 5,
            extraTarget: 'no watcher timers',
            extraMet: r.watcherTimerCount === 0,
            details: {
              k,
              mode,
              rounds,
              p99: p99(r.samples),
              floorP99: p99(r.floors),
              samples: r.samples,
              watcherTimerCount: r.watcherTimerCount,
              watcherTimers: r.watcherTimers,
              targetAppliesAt: 'K=1000 (< 5 ms); reported for every K',
            },
          }),
        );
        const last = out[out.length - 1]!;
        if (k !== 1000) last.met = r.watcherTimerCount === 0; // the 5 ms bound is stated for K = 1,000
        out.push(
          absoluteResult({
            id: 'P3',
            name: `wake-up K=${k}, ${mode} (p99)`,
            unit: 'ms',
            value: p99(r.samples),
            floor: p99(r.floors),
            better: 'lower',
            limit: 5,
            details: { k, mode, rounds },
          }),
        );
        if (k !== 1000) out[out.length - 1]!.met = true;
      } finally {
        await safeRemove(dir);
      }
    }
  }
  return out;
}
