/**
 * Invariant violations the simulator finds that are known and still open, each with the
 * circumstances it is reported with (the checker's tags for the alloc concerned). The CI spec
 * (spec/sim/sim.spec.ts) fails on any violation that is not one of these; each of these is a
 * skipped regression spec there, with its seed and shrunk op list. Remove an entry when its fix
 * lands: the skipped spec then runs, and the seeds it covered must come back clean.
 * @module
 */
import type { Violation } from './invariants.ts';
import type { Op } from './ops.ts';

/** One known, open finding. */
export interface KnownFinding {
  id: string;
  /** What goes wrong, in a sentence. */
  what: string;
  /** Who fixes it. */
  owner: string;
  invariants: Array<Violation['invariant']>;
  /** The alloc concerned carries every one of these tags. */
  tags: string[];
  /** And the message matches (when given). */
  message?: RegExp;
  /** A seed and the shrunk op list that shows it. */
  seed: number;
  ops: Op[];
}

export const KNOWN_FINDINGS: readonly KnownFinding[] = [
  // Fixed on fix-9 (seed, then what it showed), each a regression spec in
  // spec/sim/fix9-regressions.spec.ts: terminal-status-reverts (4, I4),
  // restored-exit-reported-twice (2, I6), restored-setup-failure-orphans (1, I1/I3/I5),
  // failed-restore-leaves-process (125, I5), killed-without-terminated-after-restore (12, I6),
  // failed-wait-recorded-as-exit (66877, I2/I5), setup-failure-kill-without-killing (1478, I6).
  {
    id: 'restored-in-shutdown-delay-killed-without-terminated',
    what: 'A task restored while it waited out its shutdown_delay (state pending, process alive) whose reattach fails during the kill reports Killed without a Terminated for the run.',
    owner: "nomad-14 (shutdown_delay keeps the task pending, as Nomad does; the restore path's kill-while-recovering assumes running)",
    invariants: ['I6'],
    tags: ['restored'],
    message: /Killed while its run has not Terminated/,
    seed: 269,
    ops: [
      {
        at: 32,
        op: 'add',
        a: 0,
        spec: {
          type: 'service',
          tasks: [{ name: 'web', killTimeoutMs: 200, killSignal: 'SIGINT', exitCode: 0, shutdownDelayMs: 1000 }],
          restart: { attempts: 0, delayMs: 50, intervalMs: 10000, mode: 'delay' },
        },
      },
      { at: 384, op: 'stop', a: 0 },
      { at: 678, op: 'crash' },
    ],
  },
  {
    id: 'dropped-poststop-starts-again',
    what: "A poststop task an update drops while it runs after a stop can start once more (its restart was already decided when the drop's kill came).",
    owner: 'nomad-14 (update missing task on a poststop task between its exit and its restart)',
    invariants: ['I7'],
    tags: [],
    message: /after an update dropped it/,
    seed: 615,
    ops: [
      {
        at: 7169,
        op: 'add',
        a: 1,
        spec: {
          type: 'batch',
          tasks: [
            { name: 'web', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 1, lifetimeMs: 2501 },
            { name: 'db', killTimeoutMs: 3000, killSignal: 'SIGINT', exitCode: 1, hook: 'poststop', lifetimeMs: 1953, shutdownDelayMs: 100 },
          ],
          restart: { attempts: 1, delayMs: 300, intervalMs: 60000, mode: 'delay' },
          failingHooks: ['destroy'],
        },
      },
      { at: 8746, op: 'stop', a: 1 },
      { at: 10320, op: 'dropTask', a: 1, task: 'db' },
    ],
  },
];

/** The known finding a violation is an instance of, if any. */
export function knownFindingOf(v: Violation): KnownFinding | undefined {
  return KNOWN_FINDINGS.find((k) => k.invariants.includes(v.invariant) && k.tags.every((t) => v.tags.includes(t)) && (!k.message || k.message.test(v.message)));
}
