/**
 * `max_run_duration` (Nomad's group `max_run_duration`), pure. It applies to batch and sysbatch
 * jobs only, when it is above zero; the deadline is the alloc's `createTime` plus the duration
 * (no deadline without a createTime). When it passes, the alloc is killed (poststop tasks
 * first, so they never start), each live task's "Killing" event says why, and the client status
 * is `complete` with this description.
 * @module
 */
import { taskGroupOf } from '../../model/status.ts';
import type { Allocation } from '../../model/types.ts';

/** Nomad's `AllocTimeoutReasonMaxRunDuration`. */
export const MAX_RUN_DURATION_REASON = 'allocation exceeded max_run_duration';

/** The configured duration, when it applies to this alloc (batch/sysbatch, above zero). */
export function maxRunDurationOf(alloc: Allocation): number | undefined {
  if (alloc.job.type !== 'batch' && alloc.job.type !== 'sysbatch') return undefined;
  const ms = taskGroupOf(alloc).maxRunDurationMs;
  return ms && ms > 0 ? ms : undefined;
}

/** When the alloc must be stopped (ms since the epoch), or undefined for never. */
export function maxRunDeadline(alloc: Allocation): number | undefined {
  const ms = maxRunDurationOf(alloc);
  if (ms === undefined || !alloc.createTime) return undefined;
  return alloc.createTime + ms;
}
