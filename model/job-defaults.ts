/**
 * Nomad's canonical job defaults (its API `Canonicalize`), in berth's units (ms, MB): what a job
 * file leaves out. Shared by the jobspec canonicaliser and `parseAllocation` (the restart policy's
 * defaults are `defaultRestartPolicy` in the restart policy module).
 * @module
 */
import type { Job, MigrateStrategy, ReschedulePolicy, UpdateStrategy } from './types.ts';

/** Nomad's default job priority. */
export const DEFAULT_JOB_PRIORITY = 50;

/** Nomad's `DefaultUpdateStrategy` (service and system jobs get it when they give none). */
export const DEFAULT_UPDATE: Readonly<UpdateStrategy> = Object.freeze({
  staggerMs: 30_000,
  maxParallel: 1,
  healthCheck: 'checks',
  minHealthyTimeMs: 10_000,
  healthyDeadlineMs: 300_000,
  progressDeadlineMs: 600_000,
  autoRevert: false,
  autoPromote: false,
  canary: 0,
});

/** Nomad's `DefaultMigrateStrategy` (service groups get it). */
export const DEFAULT_MIGRATE: Readonly<MigrateStrategy> = Object.freeze({
  maxParallel: 1,
  healthCheck: 'checks',
  minHealthyTimeMs: 10_000,
  healthyDeadlineMs: 300_000,
});

/** Nomad's default ephemeral disk, in MB. */
export const DEFAULT_EPHEMERAL_DISK_MB = 300;

/** Nomad's default task kill timeout, in ms. */
export const DEFAULT_KILL_TIMEOUT_MS = 5000;

/** Nomad's default log rotation: 10 files of 10 MB. */
export const DEFAULT_LOGS = Object.freeze({ maxFiles: 10, maxFileSizeMB: 10 });

/**
 * Nomad's `NewDefaultReschedulePolicy` for a job type: service unlimited exponential from 30s to
 * 1h; batch once in 24h after 5s; system and sysbatch none (Nomad gives them no policy at all).
 */
export function defaultReschedulePolicy(type: Job['type']): ReschedulePolicy | undefined {
  if (type === 'service') return { attempts: 0, intervalMs: 0, delayMs: 30_000, delayFunction: 'exponential', maxDelayMs: 3_600_000, unlimited: true };
  if (type === 'batch') return { attempts: 1, intervalMs: 24 * 3_600_000, delayMs: 5000, delayFunction: 'constant', maxDelayMs: 0, unlimited: false };
  return undefined;
}

/** A group's (possibly partial) reschedule policy with the job type's defaults filled in. */
export function completeReschedulePolicy(type: Job['type'], given: Partial<ReschedulePolicy> | undefined): ReschedulePolicy | undefined {
  const d = defaultReschedulePolicy(type) ?? { attempts: 0, intervalMs: 0, delayMs: 0, delayFunction: 'constant', maxDelayMs: 0, unlimited: false };
  if (!given) return defaultReschedulePolicy(type);
  const out = { ...d };
  for (const [k, v] of Object.entries(given)) if (v !== undefined && (v as unknown) !== '') (out as Record<string, unknown>)[k] = v;
  return out;
}
