/**
 * Nomad's default restart policies by job type, and a partial policy completed over them (its
 * API `Canonicalize`): a berth JSON `restartPolicy: { attempts: 5 }` keeps the type's interval,
 * delay and mode instead of becoming "unlimited instant restarts".
 * @module
 */
import type { Job, RestartPolicy } from './types.ts';

/** Nomad's default policy for a job type (durations in ms). */
export function defaultRestartPolicy(jobType: Job['type']): RestartPolicy {
  if (jobType === 'batch' || jobType === 'sysbatch') return { attempts: 3, intervalMs: 24 * 3600_000, delayMs: 15_000, mode: 'fail' };
  return { attempts: 2, intervalMs: 30 * 60_000, delayMs: 15_000, mode: 'fail' };
}

/** `given`'s fields over `base` (a group's policy over the type's default, a task's over its group's). */
export function completeRestartPolicy(base: RestartPolicy, given: Partial<RestartPolicy> | undefined): RestartPolicy | undefined {
  if (!given) return undefined;
  const out = { ...base };
  for (const [k, v] of Object.entries(given)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
