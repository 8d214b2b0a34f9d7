/**
 * Runs many seeds in worker processes: each seed is one deterministic run (its own scheduler and
 * clock), so which process runs it changes nothing of its result, and a soak of 1,000 seeds takes
 * about 1/workers of its serial time on an idle machine. Processes, not threads: a worker thread
 * cannot reap the compiler process tsx starts in it, so each one would leave a zombie.
 * @module
 */
import { fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Coverage } from './coverage.ts';
import type { Violation } from './invariants.ts';

/** What one worker is given. */
export interface SeedWork {
  seeds: number[];
  /** Count chart transitions (sent back at the end). */
  coverage: boolean;
}

/** What a worker posts: a seed's result, then its transition counts. */
export type SeedMessage = { kind: 'seed'; seed: number; violations: Violation[]; steps: number } | { kind: 'done'; counts: Array<[string, number]> };

/** One seed's outcome. */
export interface SeedOutcome {
  seed: number;
  violations: Violation[];
  steps: number;
}

/** Options of {@link runSeeds}. */
export interface RunSeedsOptions {
  from: number;
  count: number;
  /** Processes; default the machine's parallelism, at most the seed count. */
  workers?: number;
  /** Adds the runs' transition counts to this coverage. */
  coverage?: Coverage;
  /** Called as each seed ends (in the order they end). */
  onSeed?: (o: SeedOutcome) => void;
}

const WORKER = fileURLToPath(new URL('./seed-worker.ts', import.meta.url));

/** Runs seeds `from .. from + count - 1`; the outcomes come back sorted by seed. A worker that fails rejects the whole run. */
export async function runSeeds(opts: RunSeedsOptions): Promise<SeedOutcome[]> {
  const n = Math.max(1, Math.min(opts.workers ?? availableParallelism(), opts.count));
  // Strided shares: neighbouring seeds are alike in cost, so each thread gets a fair mix.
  const shares = Array.from({ length: n }, (_, i) => Array.from({ length: Math.ceil((opts.count - i) / n) }, (_, k) => opts.from + i + k * n));
  const out: SeedOutcome[] = [];
  await Promise.all(
    shares.map(
      (seeds) =>
        new Promise<void>((resolve, reject) => {
          const work: SeedWork = { seeds, coverage: opts.coverage !== undefined };
          const w = fork(WORKER, [], { execArgv: ['--import', 'tsx'], serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
          let done = false;
          w.send(work);
          w.on('message', (m: SeedMessage) => {
            if (m.kind === 'seed') {
              const o = { seed: m.seed, violations: m.violations, steps: m.steps };
              out.push(o);
              opts.onSeed?.(o);
            } else {
              done = true;
              for (const [k, c] of m.counts) opts.coverage?.counts.set(k, (opts.coverage.counts.get(k) ?? 0) + c);
            }
          });
          w.once('error', reject);
          w.once('exit', (code, sig) => (done ? resolve() : reject(new Error(`a seed worker exited (${sig ?? `code ${code}`}) before its last seed`))));
        }),
    ),
  );
  return out.sort((a, b) => a.seed - b.seed);
}
