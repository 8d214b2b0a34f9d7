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
  // Fixed (seed, then what it showed), each a regression spec in
  // spec/sim/fixed-findings.spec.ts: terminal-status-reverts (4, I4),
  // restored-exit-reported-twice (2, I6), restored-setup-failure-orphans (1, I1/I3/I5),
  // failed-restore-leaves-process (125, I5), killed-without-terminated-after-restore (12, I6),
  // failed-wait-recorded-as-exit (66877, I2/I5), setup-failure-kill-without-killing (1478, I6),
  // restored-in-shutdown-delay-killed-without-terminated (269, I6: a run left open by a task in
  // its shutdown delay ends with Terminated), dropped-poststop-starts-again (615, I7: a stopping
  // alloc applies an update's dropped tasks too), and five from the long soak where a kill meant
  // to end a process whose wait or reattach failed itself failed once (109878, 127306, 134471,
  // 135699, 135830; I1/I5: such kills now retry on Nomad's back-off), and four from a soak of
  // seeds 1001-11000 (1932, 3052, 6646, 7809; I6: an exit saved while the task waited out its
  // shutdown delay is reported on restore, as the run is open by its events), and 10159 (I6,
  // the checker's: a run also ends at Failed Restoring Task or Driver Failure), and 16477 (I5,
  // the checker's: two restartAlls served together revive a finished prestart task once, with
  // the first request's time on its Restart Signaled).
];

/** The known finding a violation is an instance of, if any. */
export function knownFindingOf(v: Violation): KnownFinding | undefined {
  return KNOWN_FINDINGS.find((k) => k.invariants.includes(v.invariant) && k.tags.every((t) => v.tags.includes(t)) && (!k.message || k.message.test(v.message)));
}
