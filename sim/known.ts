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
  {
    id: 'failed-wait-recorded-as-exit',
    what: 'A wait that failed (lost contact with the executor) is saved as the task exit before the process is killed; a host that dies in between restores that exit while the process lives, and the task is started again beside it.',
    owner: 'fix-9 (exit recorded before the driver record goes: finish() puts { exited } before destroy(force) ends the process)',
    invariants: ['I1', 'I2', 'I3', 'I5'],
    tags: ['restored-failed-wait'],
    seed: 66877,
    ops: [{"at": 245, "op": "add", "a": 0, "spec": {"type": "service", "tasks": [{"name": "web", "killTimeoutMs": 50, "killSignal": "SIGINT", "exitCode": 0}, {"name": "db", "killTimeoutMs": 200, "killSignal": "SIGINT", "exitCode": 1, "hook": "prestart", "sidecar": true, "lifetimeMs": 2700}, {"name": "log", "killTimeoutMs": 3000, "killSignal": "SIGINT", "exitCode": 1, "lifetimeMs": 588}], "restart": {"attempts": 3, "delayMs": 50, "intervalMs": 2000, "mode": "delay"}}}, {"at": 484, "op": "crash"}],
  },
  {
    id: 'setup-failure-kill-without-killing',
    what: 'A restored alloc whose alloc dir cannot be rebuilt kills its live tasks, but a task the Setup Failure already marked finished gets Terminated and Killed without the Killing before them.',
    owner: 'fix-9 (restored setup failure: killEvents skips Killing once finishedAt is set)',
    invariants: ['I6'],
    tags: ['restored-setup-failure'],
    message: /Killed without Killing before it/,
    seed: 1478,
    ops: [{"at": 1745, "op": "add", "a": 0, "spec": {"type": "service", "tasks": [{"name": "web", "killTimeoutMs": 1000, "killSignal": "SIGINT", "exitCode": 0}, {"name": "db", "killTimeoutMs": 200, "killSignal": "SIGINT", "exitCode": 1, "hook": "poststop", "lifetimeMs": 827}, {"name": "log", "killTimeoutMs": 1000, "killSignal": "SIGINT", "exitCode": 0, "lifetimeMs": 798}], "restart": {"attempts": 3, "delayMs": 50, "intervalMs": 10000, "mode": "delay"}, "sticky": true}}, {"at": 25425, "op": "crash"}, {"at": 25459, "op": "crash"}],
  },
];
/** The known finding a violation is an instance of, if any. */
export function knownFindingOf(v: Violation): KnownFinding | undefined {
  return KNOWN_FINDINGS.find((k) => k.invariants.includes(v.invariant) && k.tags.every((t) => v.tags.includes(t)) && (!k.message || k.message.test(v.message)));
}
