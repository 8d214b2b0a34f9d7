/**
 * What the server half's garbage collector may remove, as Nomad's core scheduler decides it
 * (`core_sched.go`): a pure function of the state, the time and the thresholds.
 *
 * - **Evaluations** (`eval_gc_threshold`, `batch_eval_gc_threshold` for batch jobs): a terminal
 *   eval older than its threshold goes once every alloc it placed may go; the allocs that may go
 *   go either way. A batch job's evals stay while the job is not dead (or dead but not stopped:
 *   its allocs are what says it ran), except allocs of older job versions.
 * - **Allocations** go with their eval or job when terminal, not running on the client, older
 *   than the threshold, and not needed for rescheduling (a failed alloc of a live job that its
 *   reschedule policy could still replace, and was not replaced, stays).
 * - **Jobs** (`job_gc_threshold`): a dead job (stopped, or a finished batch job; periodic and
 *   parameterized ones only when stopped) unchanged for the threshold, once all its evals and
 *   allocs may go; they go with it, with its deployments and versions.
 * - **Deployments** (`deployment_gc_threshold`): a finished one whose allocs are all terminal.
 * - Rows of a job that no longer exists (a purge) may go as soon as they are terminal: a purge
 *   forgets the job entirely, unlike Nomad, which keeps them for the thresholds.
 *
 * Ages are wall-clock: an object's last modify time against `now` minus the threshold (Nomad
 * maps the same thresholds to raft indexes). A forced GC (`PUT /v1/system/gc`) ignores ages.
 * An alloc the client still holds (`clientHolds`) is never collected: the client releases it first.
 * @module
 */
import { isTerminal } from '../../index.ts';
import type { ServerGcConfig } from '../config/config.ts';
import { jobStatus } from '../state/job-status.ts';
import type { Deployment, Evaluation, JobRecord, ServerAlloc } from '../state/types.ts';

/** The state the policy reads. */
export interface GcView {
  readonly jobs: ReadonlyMap<string, JobRecord>;
  readonly evals: ReadonlyMap<string, Evaluation>;
  readonly allocs: ReadonlyMap<string, ServerAlloc>;
  readonly deployments: ReadonlyMap<string, Deployment>;
}

/** How one pass decides. */
export interface GcPolicyInput {
  /** Milliseconds since the epoch. */
  now: number;
  thresholds: Omit<ServerGcConfig, 'jobGcIntervalMs'>;
  /** Nomad's forced GC: every terminal object regardless of age. */
  force: boolean;
  /** The client still has this alloc (its dir, its runner): its row must stay. */
  clientHolds: (allocId: string) => boolean;
}

/** The ids one pass removes. */
export interface GcPlan {
  jobs: string[];
  evals: string[];
  allocs: string[];
  deployments: string[];
}

/** An evaluation's statuses once it is over. */
export const TERMINAL_EVAL: ReadonlySet<string> = new Set(['complete', 'failed', 'canceled']);
const ACTIVE_DEPLOYMENT = new Set(['running', 'paused']);

/** Nomad's alloc `TerminalStatus`: the servers or the client say it is over. */
export const allocTerminal = (a: ServerAlloc['alloc']): boolean => isTerminal(a);

/** Nomad's job GC index: which jobs may be collected at all once old enough. */
function jobCollectable(job: JobRecord, dead: (job: JobRecord) => boolean): boolean {
  const api = job.apiJob as { Periodic?: { Enabled?: boolean } | null; ParameterizedJob?: unknown; Type?: string };
  if (api.Periodic?.Enabled || (api.ParameterizedJob !== undefined && api.ParameterizedJob !== null && api.ParameterizedJob !== false)) return job.stop;
  if (!dead(job)) return false;
  return job.stop || api.Type === 'batch' || api.Type === 'sysbatch';
}

/** See the module comment. */
export function serverGcPlan(view: GcView, input: GcPolicyInput): GcPlan {
  const { now, thresholds, force, clientHolds } = input;
  const group = <T>(m: Map<string, T[]>, key: string | undefined, v: T) => {
    if (key === undefined) return;
    const list = m.get(key);
    if (list) list.push(v);
    else m.set(key, [v]);
  };
  const allocsByEval = new Map<string, ServerAlloc[]>();
  const allocsByJob = new Map<string, ServerAlloc[]>();
  const allocsByDeployment = new Map<string, ServerAlloc[]>();
  for (const s of view.allocs.values()) {
    group(allocsByEval, s.alloc.evalId, s);
    group(allocsByJob, s.alloc.jobId, s);
    group(allocsByDeployment, s.alloc.deploymentId, s);
  }
  const evalsByJob = new Map<string, Evaluation[]>();
  for (const e of view.evals.values()) group(evalsByJob, e.jobId, e);
  // One status per job for the whole pass (each reads the job's allocs).
  const statuses = new Map<string, ReturnType<typeof jobStatus>>();
  const dead = (job: JobRecord) => {
    let st = statuses.get(job.id);
    if (st === undefined) statuses.set(job.id, (st = jobStatus(job, { allocs: new Map((allocsByJob.get(job.id) ?? []).map((s) => [s.alloc.id, s])) })));
    return st === 'dead';
  };

  /** Old enough: unchanged for `threshold`, or forced, or its job is gone. */
  const old = (time: number, threshold: number, job: JobRecord | undefined) => force || !job || time <= now - threshold;

  const allocEligible = (s: ServerAlloc, job: JobRecord | undefined, threshold: number): boolean => {
    const a = s.alloc;
    if (!allocTerminal(a) || !old(a.modifyTime ?? a.createTime ?? 0, threshold, job)) return false;
    if (a.clientStatus === 'running' || clientHolds(a.id)) return false;
    if (!job || job.stop || dead(job)) return true;
    if (a.desiredStatus === 'stop') return true;
    if (a.clientStatus !== 'failed') return true;
    const policy = a.job.taskGroups.find((g) => g.name === a.taskGroup)?.reschedulePolicy;
    if (!policy || (!policy.unlimited && policy.attempts === 0)) return true;
    if (s.nextAllocation) return true;
    if (policy.unlimited) return false;
    const last = a.rescheduleTracker?.events.at(-1);
    if (!last) return false;
    return now - last.rescheduleTime > policy.intervalMs;
  };

  /** Nomad's `gcEval`: may the eval go, and which of its allocs may. */
  const evalVerdict = (e: Evaluation, threshold: number, allowBatch: boolean): { collect: boolean; allocs: string[] } => {
    const job = view.jobs.get(e.jobId);
    if (!TERMINAL_EVAL.has(e.status) || !old(e.modifyTime, threshold, job)) return { collect: false, allocs: [] };
    const allocs = allocsByEval.get(e.id) ?? [];
    if (e.type === 'batch' && job) {
      if (!(dead(job) && (job.stop || allowBatch))) {
        // A live batch job: only terminal allocs of older versions (its current ones say it ran).
        const older = allocs.filter(
          (s) => s.createIndex < job.jobModifyIndex && allocTerminal(s.alloc) && old(s.alloc.modifyTime ?? 0, threshold, job) && !clientHolds(s.alloc.id),
        );
        return { collect: older.length === allocs.length, allocs: older.map((s) => s.alloc.id) };
      }
    }
    const ok = allocs.filter((s) => allocEligible(s, job, threshold));
    return { collect: ok.length === allocs.length, allocs: ok.map((s) => s.alloc.id) };
  };

  const plan: GcPlan = { jobs: [], evals: [], allocs: [], deployments: [] };
  const gone = { evals: new Set<string>(), allocs: new Set<string>() };
  const take = (kind: 'evals' | 'allocs', id: string) => {
    if (gone[kind].has(id)) return;
    gone[kind].add(id);
    plan[kind].push(id);
  };

  // Jobs first: a collected job takes all of its evaluations, allocations and deployments.
  for (const job of view.jobs.values()) {
    if (!jobCollectable(job, dead) || !old(job.modifyTime ?? job.submitTime, thresholds.jobGcThresholdMs, job)) continue;
    const verdicts = (evalsByJob.get(job.id) ?? []).map((e) => evalVerdict(e, thresholds.jobGcThresholdMs, true));
    if (!verdicts.every((v) => v.collect)) continue;
    // Allocs whose eval is already gone must be collectable too.
    const allocs = allocsByJob.get(job.id) ?? [];
    if (!allocs.every((s) => allocEligible(s, job, thresholds.jobGcThresholdMs))) continue;
    plan.jobs.push(job.id);
    for (const e of evalsByJob.get(job.id) ?? []) take('evals', e.id);
    for (const s of allocs) take('allocs', s.alloc.id);
  }
  const jobGone = new Set(plan.jobs);

  for (const e of view.evals.values()) {
    if (gone.evals.has(e.id)) continue;
    const threshold = e.type === 'batch' ? thresholds.batchEvalGcThresholdMs : thresholds.evalGcThresholdMs;
    const v = evalVerdict(e, threshold, false);
    if (v.collect) take('evals', e.id);
    for (const id of v.allocs) take('allocs', id);
  }

  // Allocs of a job that no longer exists, whose eval is gone already (a purge).
  for (const [jobId, allocs] of allocsByJob) {
    if (view.jobs.has(jobId)) continue;
    for (const s of allocs) if (allocEligible(s, undefined, 0)) take('allocs', s.alloc.id);
  }

  for (const d of view.deployments.values()) {
    const job = view.jobs.get(d.jobId);
    if (!jobGone.has(d.jobId)) {
      if (ACTIVE_DEPLOYMENT.has(d.status) && job) continue;
      if (!old(d.modifyTime, thresholds.deploymentGcThresholdMs, job)) continue;
    }
    const live = (allocsByDeployment.get(d.id) ?? []).some((s) => !gone.allocs.has(s.alloc.id) && !allocTerminal(s.alloc));
    if (!live) plan.deployments.push(d.id);
  }
  return plan;
}
