/**
 * berth's one-node scheduler: Nomad's generic scheduler and preemptor, as pure functions.
 *
 * Input ({@link ScheduleInput}): the node (its resources, `reserved` block and dynamic port
 * range), every job, every alloc on the node, the scheduler configuration (preemption per
 * scheduler type), the evaluation being processed, `now`, and an id generator.
 * Output ({@link Plan}): allocs to place (named `<job>.<group>[<index>]`, with
 * `allocatedResources` incl. ports, `previousAllocation`, `preemptedAllocations`,
 * `rescheduleTracker`), allocs to stop and to evict (with Nomad's `desiredDescription`), in-place
 * updates, what stays queued and why, the rolling update's progress, and the evals to store.
 *
 * @example
 * ```ts
 * import { schedule, newEvaluation } from './agent/scheduler/index.ts';
 * const ev = newEvaluation({ id: newId(), job, triggeredBy: 'job-register', now });
 * const plan = schedule({ node, jobs, allocs, config, eval: ev, now, newId });
 * for (const a of plan.stop) store.put(a);
 * for (const a of plan.preempt) store.put(a);
 * for (const a of plan.place) store.put(a);
 * for (const e of [plan.eval, ...plan.evals]) evals.put(e);
 * ```
 * See docs/scheduler.md for what it does and leaves out.
 * @module
 */
export { schedule, emptyPlan, defaultSchedulerConfiguration, preemptionEnabled, nodeInDatacenters, SchedulerInputError } from './schedule.ts';
export {
  newEvaluation,
  blockedEvalsToRetry,
  supersededBlockedEvals,
  blockedEvalOf,
  isReady,
  DESC_BLOCKED_EVAL,
  DESC_RESCHEDULE_FOLLOWUP,
  RESCHEDULE_BATCH_WINDOW_MS,
} from './evaluations.ts';
export { STOP_NOT_NEEDED, STOP_UPDATING, STOP_MIGRATING, STOP_RESCHEDULED } from './reconcile.ts';
export { allocName, allocIndexOf } from './names.ts';
export { nextDelay, nextRescheduleTime, rescheduleTrackerFor } from './reschedule.ts';
export { destructiveChange, destructiveTaskChange } from './updates.ts';
export {
  selectPreemptions,
  preemptionScore,
  PREEMPTION_PRIORITY_DELTA,
  MAX_PARALLEL_PENALTY,
  DEFAULT_JOB_PRIORITY,
  type PreemptionInput,
} from './preemption.ts';
export { DEFAULT_MIN_DYNAMIC_PORT, DEFAULT_MAX_DYNAMIC_PORT } from './ports.ts';
export { DEFAULT_TASK_CPU_MHZ, DEFAULT_TASK_MEMORY_MB, DEFAULT_EPHEMERAL_DISK_MB, type Comparable } from './resources.ts';
export type * from './types.ts';
