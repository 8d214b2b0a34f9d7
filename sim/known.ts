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
    id: "terminal-status-reverts",
    what: "An alloc that arrived (or was restored) client-terminal reports the servers' client status again after any update: terminal, then pending.",
    owner: "fix-9 (defect 4: arrivedTerminal view takes clientStatus from ctx.alloc, which an update replaces)",
    invariants: ["I4"],
    tags: ["client-terminal"],
    message: /went from a terminal client status back/,
    seed: 4,
    ops: [{"at": 37438, "op": "add", "a": 3, "spec": {"type": "batch", "tasks": [{"name": "web", "killTimeoutMs": 200, "killSignal": "SIGINT", "exitCode": 1, "lifetimeMs": 1406}, {"name": "db", "killTimeoutMs": 1000, "killSignal": "SIGINT", "exitCode": 0, "hook": "poststop", "lifetimeMs": 1589}, {"name": "log", "killTimeoutMs": 1000, "killSignal": "SIGTERM", "exitCode": 0, "lifetimeMs": 2365}], "restart": {"attempts": 2, "delayMs": 50, "intervalMs": 2000, "mode": "fail"}}, "prev": {"a": 0}}, {"at": 37649, "op": "restartTask", "a": 3, "task": "web"}, {"at": 46780, "op": "crash"}, {"at": 47127, "op": "stop", "a": 3}],
  },
  {
    id: "restored-exit-reported-twice",
    what: "A task restored while it waited out a restart delay reports its last exit again (a second Terminated): the handle row keeps `exited` after the exit was reported.",
    owner: "fix-9 (persist intent: exit kept in the handle row until the next start)",
    invariants: ["I6"],
    tags: ["restored"],
    message: /Terminated without a start it ends/,
    seed: 2,
    ops: [{"at": 248, "op": "add", "a": 0, "spec": {"type": "service", "tasks": [{"name": "web", "killTimeoutMs": 200, "killSignal": "SIGTERM", "exitCode": 0, "lifetimeMs": 3175}, {"name": "db", "killTimeoutMs": 3000, "killSignal": "SIGINT", "exitCode": 0, "lifetimeMs": 2715}, {"name": "log", "killTimeoutMs": 1000, "killSignal": "SIGINT", "exitCode": 1, "lifetimeMs": 2013}], "restart": {"attempts": 2, "delayMs": 1500, "intervalMs": 60000, "mode": "delay"}}}, {"at": 12061, "op": "crash"}],
  },
  {
    id: "restored-setup-failure-orphans",
    what: "A restored alloc whose alloc dir cannot be rebuilt marks its tasks dead (Setup Failure) without killing the processes its saved handles name: they run on, owned by nobody.",
    owner: "fix-9 (restore completes or kills what a dead host left)",
    invariants: ["I1", "I2", "I3", "I4", "I5"],
    tags: ["restored-setup-failure"],
    seed: 1,
    ops: [{"at": 3004, "op": "add", "a": 1, "spec": {"type": "service", "tasks": [{"name": "web", "killTimeoutMs": 200, "killSignal": "SIGINT", "exitCode": 0}], "restart": {"attempts": 3, "delayMs": 50, "intervalMs": 10000, "mode": "delay"}, "sticky": true}}, {"at": 3941, "op": "crash"}],
  },
  {
    id: "failed-restore-leaves-process",
    what: "When reattaching a handle saved before its start fails (executor unreachable), the task restarts while the process that start made still runs: two copies, one orphaned.",
    owner: "fix-9 (defect 2: recoverTask kills nothing for a `starting` handle)",
    invariants: ["I1", "I3", "I5", "I6"],
    tags: ["failed-restore"],
    seed: 125,
    ops: [{"at": 2929, "op": "crash"}, {"at": 3070, "op": "crash"}, {"at": 3157, "op": "crash"}, {"at": 7376, "op": "crash"}, {"at": 21450, "op": "add", "a": 3, "spec": {"type": "service", "tasks": [{"name": "web", "killTimeoutMs": 50, "killSignal": "SIGINT", "exitCode": 1}], "restart": {"attempts": 3, "delayMs": 50, "intervalMs": 2000, "mode": "fail"}}}, {"at": 21535, "op": "crash"}],
  },
  {
    id: "killed-without-terminated-after-restore",
    what: "A task killed while it is being reattached reports Killed without the Terminated of the run the kill ended.",
    owner: "fix-9 (kill during recovering)",
    invariants: ["I6"],
    tags: ["restored"],
    message: /Killed while its run has not Terminated/,
    seed: 12,
    ops: [{"at": 491, "op": "add", "a": 0, "spec": {"type": "batch", "tasks": [{"name": "web", "killTimeoutMs": 3000, "killSignal": "SIGINT", "exitCode": 0, "lifetimeMs": 461}, {"name": "db", "killTimeoutMs": 3000, "killSignal": "SIGTERM", "exitCode": 0, "lifetimeMs": 2924}], "restart": {"attempts": 3, "delayMs": 1500, "intervalMs": 10000, "mode": "delay"}}}, {"at": 1657, "op": "crash"}, {"at": 4052, "op": "crash"}, {"at": 4056, "op": "burst", "as": [0, 1]}],
  },
];

/** The known finding a violation is an instance of, if any. */
export function knownFindingOf(v: Violation): KnownFinding | undefined {
  return KNOWN_FINDINGS.find((k) => k.invariants.includes(v.invariant) && k.tags.every((t) => v.tags.includes(t)) && (!k.message || k.message.test(v.message)));
}
