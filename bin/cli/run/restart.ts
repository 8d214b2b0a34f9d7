/**
 * Restarts in `berth run`: the `--restart attempts=0,delay=1s,interval=24h,mode=fail` override,
 * and the line that says why a task waits when it restarts ("restarting in 17.5 s: attempt 1 of 3
 * in 24h, the batch default; set group.restart to change"). Nomad's batch default (3 attempts,
 * 15 s apart) otherwise makes a failing task take about a minute to fail, in silence.
 * @module
 */
import { defaultRestartPolicy } from '../../../machines/policy/restarts.ts';
import { formatGoDuration, parseGoDuration } from '../../../model/duration.ts';
import type { Allocation, RestartPolicy, TaskEvent } from '../../../model/types.ts';
import { UsageError } from '../errors.ts';

/** The fields `--restart` may set. */
export type RestartOverride = Partial<RestartPolicy>;

/** Parses `attempts=N,delay=D,interval=D,mode=fail|delay` (any subset, any order). */
export function parseRestartFlag(value: string): RestartOverride {
  const out: RestartOverride = {};
  const bad = (why: string) => new UsageError(`--restart ${why} (e.g. --restart attempts=0 or attempts=2,delay=1s,interval=1m,mode=fail)`, 'run');
  for (const part of value.split(',')) {
    const m = /^\s*(\w+)\s*=\s*(.*?)\s*$/.exec(part);
    if (!m) throw bad(`wants key=value pairs, got ${JSON.stringify(part)}`);
    const [, key, v] = m as unknown as [string, string, string];
    const duration = () => {
      try {
        const ms = parseGoDuration(v);
        if (ms >= 0) return ms;
      } catch {
        // reported below
      }
      throw bad(`${key} wants a duration such as 15s, got ${JSON.stringify(v)}`);
    };
    if (key === 'attempts') {
      if (!/^\d+$/.test(v)) throw bad(`attempts wants a non-negative integer, got ${JSON.stringify(v)}`);
      out.attempts = Number(v);
    } else if (key === 'delay') out.delayMs = duration();
    else if (key === 'interval') {
      out.intervalMs = duration();
      if (out.intervalMs === 0) throw bad('interval must be more than 0');
    } else if (key === 'mode') {
      if (v !== 'fail' && v !== 'delay') throw bad(`mode is fail or delay, got ${JSON.stringify(v)}`);
      out.mode = v;
    } else throw bad(`has no key ${JSON.stringify(key)} (attempts, delay, interval, mode)`);
  }
  return out;
}

/**
 * `alloc` with `override` applied to its group's restart policy and to every task of the group
 * that has one of its own (a task's policy would otherwise win over the group's).
 */
export function applyRestartOverride(alloc: Allocation, override: RestartOverride): Allocation {
  const base = defaultRestartPolicy(alloc.job.type);
  const taskGroups = alloc.job.taskGroups.map((g) => {
    if (g.name !== alloc.taskGroup) return g;
    const group = { ...base, ...g.restartPolicy, ...override };
    return { ...g, restartPolicy: group, tasks: g.tasks.map((t) => (t.restartPolicy ? { ...t, restartPolicy: { ...t.restartPolicy, ...override } } : t)) };
  });
  return { ...alloc, job: { ...alloc.job, taskGroups } };
}

/** "24h", "30m", "1m30s": Go's duration without its zero tails. */
const span = (ms: number) =>
  formatGoDuration(ms)
    .replace(/h0m0s$/, 'h')
    .replace(/m0s$/, 'm');

/**
 * The note for a task's `Restarting` event: how long it waits, which attempt of how many in
 * which interval, and where that policy came from. `attempt` counts this task's restarts so far,
 * this one included. Undefined for any other event.
 */
export function restartNote(alloc: Allocation, task: string, event: TaskEvent, attempt: number, overridden: boolean): string | undefined {
  if (event.type !== 'Restarting') return undefined;
  const group = alloc.job.taskGroups.find((g) => g.name === alloc.taskGroup);
  const t = group?.tasks.find((x) => x.name === task);
  const policy = t?.restartPolicy ?? group?.restartPolicy ?? defaultRestartPolicy(alloc.job.type);
  const source = overridden
    ? 'set by --restart'
    : t?.restartPolicy
      ? "the task's restartPolicy"
      : group?.restartPolicy
        ? "the group's restartPolicy"
        : `the ${alloc.job.type} default; set group.restart to change (berth run --restart attempts=0 to fail at once)`;
  const delayMs = Number(event.details.start_delay ?? '0') / 1e6;
  const wait = delayMs < 1000 ? `${Math.round(delayMs)} ms` : `${+(delayMs / 1000).toFixed(1)} s`;
  return `${task}: restarting in ${wait}: attempt ${attempt} of ${policy.attempts} in ${span(policy.intervalMs)}, ${source}`;
}
