/**
 * Evaluations as plain data: making one for a trigger, the blocked eval for what could not be
 * placed, the follow-ups for delayed reschedules and preempted jobs, and which blocked evals to
 * retry when room frees up. Status texts are Nomad's.
 * @module
 */
import type { Job } from '../../index.ts';
import { DEFAULT_JOB_PRIORITY } from './preemption.ts';
import type { EvalTrigger, Evaluation } from './types.ts';

/** Nomad's status description of a blocked eval. */
export const DESC_BLOCKED_EVAL = 'created to place remaining allocations';
/** Nomad's status description of a delayed-reschedule follow-up. */
export const DESC_RESCHEDULE_FOLLOWUP = 'created for delayed rescheduling';
/** Failed allocs whose reschedule times are this close share one follow-up eval (Nomad's window). */
export const RESCHEDULE_BATCH_WINDOW_MS = 5000;

/** A new pending evaluation of `job` (or of a purged job, by id) for `triggeredBy`. */
export function newEvaluation(opts: {
  id: string;
  job: Job | { id: string; type: Job['type']; priority?: number; namespace?: string; version?: number };
  triggeredBy: EvalTrigger;
  now: number;
  nodeId?: string;
  waitUntil?: number;
  statusDescription?: string;
}): Evaluation {
  const { job } = opts;
  const ev: Evaluation = {
    id: opts.id,
    namespace: job.namespace ?? 'default',
    priority: job.priority ?? DEFAULT_JOB_PRIORITY,
    type: job.type,
    triggeredBy: opts.triggeredBy,
    jobId: job.id,
    status: 'pending',
    createTime: opts.now,
    modifyTime: opts.now,
  };
  if (job.version !== undefined) ev.jobVersion = job.version;
  if (opts.nodeId) ev.nodeId = opts.nodeId;
  if (opts.waitUntil !== undefined) ev.waitUntil = opts.waitUntil;
  if (opts.statusDescription) ev.statusDescription = opts.statusDescription;
  return ev;
}

/**
 * The blocked evals to hand back to the scheduler when resources were freed (an alloc stopped,
 * finished or was evicted, or the node's resources grew). Nomad unblocks every blocked eval of the
 * node's class; with one node that is every blocked eval. Oldest first, so earlier jobs place first.
 */
export function blockedEvalsToRetry(evals: Evaluation[]): Evaluation[] {
  return evals.filter((e) => e.status === 'blocked').sort((a, b) => a.createTime - b.createTime || (a.id < b.id ? -1 : 1));
}

/**
 * The blocked eval `job` already has (the newest, should there be several), if any: a pass that
 * still cannot place everything refreshes it rather than making another, so a blocked job keeps
 * one blocked eval however often it is evaluated.
 */
export function blockedEvalOf<E extends Evaluation>(evals: Iterable<E>, jobId: string, namespace = 'default'): E | undefined {
  let out: E | undefined;
  for (const e of evals) {
    if (e.status !== 'blocked' || e.jobId !== jobId || (e.namespace ?? 'default') !== namespace) continue;
    if (!out || e.createTime > out.createTime || (e.createTime === out.createTime && e.id > out.id)) out = e;
  }
  return out;
}

/**
 * Nomad keeps one blocked eval per job: given every eval and a newly blocked one, the older
 * blocked evals of its job, canceled with Nomad's description.
 */
export function supersededBlockedEvals(evals: Evaluation[], blocked: Evaluation, now: number): Evaluation[] {
  return evals
    .filter(
      (e) => e.status === 'blocked' && e.id !== blocked.id && e.jobId === blocked.jobId && (e.namespace ?? 'default') === (blocked.namespace ?? 'default'),
    )
    .map((e) => ({
      ...e,
      status: 'canceled' as const,
      statusDescription: `existing blocked evaluation exists for job ${JSON.stringify(e.jobId)}`,
      modifyTime: now,
    }));
}

/** Whether an eval may be processed at `now` (a delayed follow-up waits for its `waitUntil`). */
export function isReady(ev: Evaluation, now: number): boolean {
  return ev.status === 'pending' && (ev.waitUntil === undefined || ev.waitUntil <= now);
}
