/**
 * Nomad's `reschedule` block: whether a failed alloc is replaced, when, and the tracker its
 * replacement carries (attempts within `interval`, `delay` growing by `delay_function` up to
 * `max_delay`, or `unlimited`).
 * @module
 */
import type { Allocation, ReschedulePolicy, RescheduleTracker } from '../../index.ts';

/** An unlimited policy keeps only this many past events (Nomad's `maxPastRescheduleEvents`). */
export const MAX_PAST_RESCHEDULE_EVENTS = 5;

/** The group's reschedule policy in the alloc's own job. */
export function reschedulePolicyOf(alloc: Allocation): ReschedulePolicy | undefined {
  return alloc.job.taskGroups.find((g) => g.name === alloc.taskGroup)?.reschedulePolicy;
}

/** When the alloc failed: the latest task finish, else its last server change (Nomad's `LastEventTime`). */
export function lastEventTime(alloc: Allocation): number {
  let last = 0;
  for (const s of Object.values(alloc.taskStates ?? {})) if (s.finishedAt && s.finishedAt > last) last = s.finishedAt;
  return last || alloc.modifyTime || 0;
}

/** Nomad's `NextDelay`: the delay before the next reschedule of this alloc. */
export function nextDelay(alloc: Allocation, policy: ReschedulePolicy): number {
  const events = alloc.rescheduleTracker?.events ?? [];
  let delay = policy.delayMs;
  if (events.length === 0) return delay;
  const last = events[events.length - 1];
  switch (policy.delayFunction) {
    case 'exponential':
      delay = last.delayMs * 2;
      break;
    case 'fibonacci':
      if (events.length >= 2) {
        const before = events[events.length - 2];
        // After a reset to the base delay the sequence starts over.
        delay = before.delayMs === policy.maxDelayMs && last.delayMs === policy.delayMs ? last.delayMs : last.delayMs + before.delayMs;
      }
      break;
    default:
      return delay;
  }
  if (policy.maxDelayMs > 0 && delay > policy.maxDelayMs) {
    delay = policy.maxDelayMs;
    // A long quiet spell since the last reschedule resets the delay.
    if (lastEventTime(alloc) - last.rescheduleTime > delay) delay = policy.delayMs;
  }
  return delay;
}

/** Reschedule events within the policy's interval before `failTime` (Nomad's `rescheduleInfo`). */
function attemptsInInterval(tracker: RescheduleTracker | undefined, policy: ReschedulePolicy, failTime: number): number {
  if (!tracker || policy.attempts <= 0) return 0;
  return tracker.events.filter((e) => failTime - e.rescheduleTime < policy.intervalMs).length;
}

/**
 * Nomad's `NextRescheduleTime`: when a failed alloc may be replaced and whether it may at all
 * (attempts left in the interval, or unlimited). Only failed (or lost) allocs that are still
 * desired to run qualify.
 */
export function nextRescheduleTime(alloc: Allocation): { time: number; eligible: boolean } {
  const policy = reschedulePolicyOf(alloc);
  const failTime = lastEventTime(alloc);
  const no = { time: 0, eligible: false };
  if (!policy || (policy.attempts === 0 && !policy.unlimited)) return no;
  if (alloc.desiredStatus !== 'run') return no;
  if (alloc.clientStatus !== 'failed' && alloc.clientStatus !== 'lost') return no;
  if (!failTime) return no;
  const delay = nextDelay(alloc, policy);
  let eligible = policy.unlimited || (policy.attempts > 0 && !alloc.rescheduleTracker);
  if (policy.attempts > 0 && alloc.rescheduleTracker) {
    eligible = attemptsInInterval(alloc.rescheduleTracker, policy, failTime) < policy.attempts && delay < policy.intervalMs;
  }
  return { time: failTime + delay, eligible };
}

/** Nomad's `UpdateRescheduleTracker`: the tracker of the replacement of `prev`, made at `now`. */
export function rescheduleTrackerFor(prev: Allocation, now: number): RescheduleTracker {
  const policy = reschedulePolicyOf(prev);
  const past = prev.rescheduleTracker?.events ?? [];
  let kept = past;
  if (policy && policy.attempts > 0) {
    kept = past.filter((e) => policy.intervalMs > 0 && now - e.rescheduleTime <= policy.intervalMs);
  } else {
    kept = past.slice(-MAX_PAST_RESCHEDULE_EVENTS);
  }
  const delayMs = policy ? nextDelay(prev, policy) : 0;
  return {
    events: [...kept.map((e) => ({ ...e })), { rescheduleTime: now, prevAllocId: prev.id, prevNodeId: prev.nodeId, delayMs }],
  };
}
