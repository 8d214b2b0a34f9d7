/**
 * The restart tracker (Nomad `taskrunner/restarts`), as a pure function over plain data.
 * The task machine keeps {@link RestartTrackerState} in its context and asks {@link decideRestart}
 * after every exit or start failure.
 * @module
 */
import type { Job, RestartPolicy, Task } from '../../model/types.ts';
import { defaultRestartPolicy } from '../../model/restart-defaults.ts';

/** Jitter applied to restart delays: the delay is in [delay, delay * 1.25). */
export const RESTART_JITTER = 0.25;

/** Reason strings, exactly as Nomad writes them. */
export const ReasonNoRestartsAllowed = 'Policy allows no restarts';
export const ReasonUnrecoverableError = 'Error was unrecoverable';
export const ReasonWithinPolicy = 'Restart within policy';
export const ReasonDelay = 'Exceeded allowed attempts, applying a delay';
export const ReasonTerminatedSuccessfully = 'Restart unnecessary as task terminated successfully';

export { defaultRestartPolicy } from '../../model/restart-defaults.ts';

/** The tracker's memory between decisions. Plain data. */
export interface RestartTrackerState {
  count: number;
  /** When the current interval began (ms): the tracker's creation, then each interval's first failure. */
  intervalStart: number;
}

/** A tracker made at `now` (Nomad's NewRestartTracker: its interval starts then). */
export const newRestartTracker = (now: number): RestartTrackerState => ({ count: 0, intervalStart: now });

/** What happened since the last decision. */
export type RestartInput =
  | { kind: 'exit'; exitCode: number; signal: number; err?: string }
  | { kind: 'startError'; recoverable: boolean; message: string }
  | { kind: 'killed' }
  | { kind: 'restartTriggered'; failure: boolean };

/** The tracker's decision. */
export type RestartDecision =
  | { state: 'Killed'; delayMs: 0 }
  | { state: 'Restarting'; delayMs: number; reason: string }
  | { state: 'Not Restarting'; reason: string }
  | { state: 'Terminated'; reason: string };

/** Static facts about the task that the rules depend on. */
export interface RestartSubject {
  policy: RestartPolicy;
  /** Restart even after a successful exit (see {@link restartsOnSuccess}). */
  onSuccess: boolean;
}

/**
 * Nomad's `onSuccess`: true by default; false for batch and sysbatch jobs; for prestart and
 * poststart tasks equal to `sidecar`; always false for poststop tasks.
 */
export function restartsOnSuccess(jobType: Job['type'], task: Pick<Task, 'lifecycle'>): boolean {
  if (task.lifecycle?.hook === 'poststop') return false;
  if (task.lifecycle) return !!task.lifecycle.sidecar;
  return !(jobType === 'batch' || jobType === 'sysbatch');
}

/** The effective policy: the task's own, else the group's, else the job type's default. */
export function effectivePolicy(jobType: Job['type'], task: Pick<Task, 'restartPolicy'>, groupPolicy?: RestartPolicy): RestartPolicy {
  return task.restartPolicy ?? groupPolicy ?? defaultRestartPolicy(jobType);
}

/**
 * Decides what to do after `input`, at time `now` (ms). `random` returns [0,1) (injectable for
 * tests). Returns the decision and the tracker's next state.
 */
export function decideRestart(
  subject: RestartSubject,
  tracker: RestartTrackerState,
  input: RestartInput,
  now: number,
  random: () => number = Math.random,
): { decision: RestartDecision; next: RestartTrackerState } {
  const { policy, onSuccess } = subject;
  if (input.kind === 'killed') return { decision: { state: 'Killed', delayMs: 0 }, next: tracker };
  if (input.kind === 'restartTriggered' && !input.failure) return { decision: { state: 'Restarting', delayMs: 0, reason: '' }, next: tracker };
  const success = input.kind === 'exit' && input.exitCode === 0 && input.signal === 0 && !input.err;

  if (policy.attempts === 0) {
    if (!onSuccess && success) return { decision: { state: 'Terminated', reason: ReasonNoRestartsAllowed }, next: tracker };
    return { decision: { state: 'Not Restarting', reason: ReasonNoRestartsAllowed }, next: tracker };
  }

  // The interval runs from when the tracker was made (the task runner's creation), not from the
  // first failure, as Nomad's NewRestartTracker starts it.
  let { count, intervalStart } = tracker;
  if (now - intervalStart > policy.intervalMs) {
    count = 0;
    intervalStart = now;
  }
  count++;
  const next = { count, intervalStart };

  if (input.kind === 'startError' && !input.recoverable) return { decision: { state: 'Not Restarting', reason: ReasonUnrecoverableError }, next };
  if (success && !onSuccess) return { decision: { state: 'Terminated', reason: ReasonTerminatedSuccessfully }, next };
  if (count > policy.attempts) {
    if (policy.mode === 'fail') {
      return {
        decision: { state: 'Not Restarting', reason: `Exceeded allowed attempts ${policy.attempts} in interval ${fmt(policy.intervalMs)} and mode is "fail"` },
        next,
      };
    }
    const delayMs = Math.max(0, intervalStart + policy.intervalMs - now);
    return { decision: { state: 'Restarting', delayMs, reason: ReasonDelay }, next };
  }
  const base = policy.delayMs > 0 ? policy.delayMs : 1e-6;
  return { decision: { state: 'Restarting', delayMs: base + random() * base * RESTART_JITTER, reason: ReasonWithinPolicy }, next };
}

function fmt(ms: number): string {
  // Go prints durations like "30m0s"; keep the same shape.
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h) return `${h}h${m}m${sec}s`;
  if (m) return `${m}m${sec}s`;
  return `${ms / 1000}s`;
}
