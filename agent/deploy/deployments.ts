/**
 * Deployments: every version of a service job whose group has an `update { max_parallel }` block
 * is tracked by one, from its first run (version 0 too, as Nomad's reconciler makes one), and a
 * job update replaces its allocs in batches. The scheduler decides each batch (all of a first
 * run's allocs at once; at most `max_parallel` replacements not yet healthy in an update); this
 * module keeps the deployment record and moves it along:
 *
 * ```
 * plan with a batch ──► deployment (job, version) running; placed allocs carry its id
 *      alloc healthy ──► healthy count +1; more to replace ──► 'deployment-watcher' evaluation
 *                                          all replaced and healthy ──► successful
 *      alloc unhealthy ──► failed ("Failed due to unhealthy allocations"): no further batch
 *                          (auto_revert: "... - rolling back to job version N", see rollback.ts)
 * ```
 *
 * With `update { canary = N }` a job update first places N canaries beside the old allocs and
 * waits for their promotion (canaries.ts) before the rolling update goes on.
 *
 * An alloc's health comes from the client (`deploymentStatus.healthy`, set by its health
 * tracker from checks); where the client reports none and the group's checks are not what decides
 * (`health_check = "task_states"`, or no checks), the agent decides: healthy once every task has
 * run for `min_healthy_time`, unhealthy when the alloc fails first.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Allocation, Job } from '../../index.ts';
import type { Plan } from '../scheduler/index.ts';
import type { AgentState, Txn } from '../state/store.ts';
import type { Deployment, JobRecord } from '../state/types.ts';
import {
  autoPromotes,
  awaitsPromotion,
  commitPromotion,
  deploymentComplete,
  healthyIn,
  promotedDeployment,
  RUNNING,
  runningDescription,
  SUCCESSFUL,
} from './canaries.ts';
import { rollbackFor } from './rollback.ts';
import type { PromoteRequest } from './canaries.ts';

type Group = Deployment['taskGroups'][string];

/** The deployment of `jobId` at `version` still under way (running or paused), if any. */
export function runningDeployment(state: { deployments: ReadonlyMap<string, Deployment> }, jobId: string, version: number): Deployment | undefined {
  return [...state.deployments.values()].find((d) => d.jobId === jobId && d.jobVersion === version && (d.status === 'running' || d.status === 'paused'));
}

/** The stored job fields a plan's deployment reads (a {@link JobRecord}'s, or the simulator's own). */
export type DeploymentJobRow = Pick<JobRecord, 'id' | 'namespace' | 'version' | 'jobModifyIndex' | 'createIndex' | 'stop'>;

/** What {@link planDeployment} reads: the stored jobs and deployments. */
export interface DeploymentView {
  jobs: ReadonlyMap<string, DeploymentJobRow>;
  deployments: ReadonlyMap<string, Deployment>;
}

/** The deployment rows a plan writes (in order) and the deployment id each rolled group's allocs carry. */
export interface PlannedDeployment {
  rows: Deployment[];
  deploymentOf: Map<string, string>;
}

/**
 * Pure: the deployments a plan's commit writes: older or stopped ones cancelled, the job's one
 * for the groups the plan rolls created or advanced; and the deployment id each placed alloc of
 * those groups should carry. `newId` names a new deployment.
 */
export function planDeployment(
  view: DeploymentView,
  plan: Plan,
  job: Job | undefined,
  opts: { index: number; now: number; newId: () => string },
): PlannedDeployment {
  const { index, now } = opts;
  const out = new Map<string, string>();
  const rec = view.jobs.get(plan.eval.jobId);
  const rows = cancelUnneeded(view, plan.eval.jobId, rec, index, now);
  const groups = Object.entries(plan.deployment);
  if (groups.length === 0 || !rec) return { rows, deploymentOf: out };
  let d = runningDeployment(view, rec.id, rec.version);
  const fresh = !d;
  d ??= {
    id: opts.newId(),
    namespace: rec.namespace,
    jobId: rec.id,
    jobVersion: rec.version,
    jobModifyIndex: rec.jobModifyIndex,
    jobCreateIndex: rec.createIndex,
    status: 'running',
    statusDescription: RUNNING,
    taskGroups: {},
    createIndex: index,
    modifyIndex: index,
    createTime: now,
    modifyTime: now,
  };
  const taskGroups: Record<string, Group> = { ...d.taskGroups };
  for (const [name, batch] of groups) {
    const update = job?.taskGroups.find((x) => x.name === name)?.update;
    const prev = taskGroups[name];
    // Every alloc the plan places in the group carries the deployment, and counts as placed.
    // An alloc updated in place joins the deployment as it is: one already healthy counts healthy
    // (Nomad's client reports its health again; the allocs are the ones that were healthy).
    const joined = plan.inPlace.filter((a) => a.taskGroup === name && a.deploymentId !== d.id);
    const placed = plan.place.filter((a) => a.taskGroup === name).length + joined.length;
    const healthyJoined = joined.filter((a) => a.deploymentStatus?.healthy === true && a.clientStatus === 'running').length;
    const canaries = plan.place.filter((a) => a.taskGroup === name && a.deploymentStatus?.canary).map((a) => a.id);
    taskGroups[name] = {
      desiredTotal: prev?.desiredTotal ?? batch.desiredTotal,
      placedAllocs: (prev?.placedAllocs ?? 0) + placed,
      healthyAllocs: (prev?.healthyAllocs ?? 0) + healthyJoined,
      unhealthyAllocs: prev?.unhealthyAllocs ?? 0,
      maxParallel: batch.maxParallel,
      minHealthyTimeMs: update?.minHealthyTimeMs ?? 10_000,
      healthyDeadlineMs: update?.healthyDeadlineMs ?? 300_000,
      progressDeadlineMs: update?.progressDeadlineMs ?? 600_000,
      desiredCanaries: prev?.desiredCanaries ?? batch.desiredCanaries,
      placedCanaries: [...(prev?.placedCanaries ?? []), ...canaries],
      promoted: prev?.promoted ?? batch.promoted,
      autoRevert: update?.autoRevert ?? false,
      autoPromote: update?.autoPromote ?? false,
    };
    const deadline = taskGroups[name].progressDeadlineMs;
    const by = prev?.requireProgressBy ?? (placed > 0 && deadline > 0 ? now + deadline : undefined);
    if (by !== undefined) taskGroups[name].requireProgressBy = by;
    out.set(name, d.id);
  }
  const statusDescription = d.status === 'running' ? runningDescription(taskGroups) : d.statusDescription;
  let next: Deployment = { ...d, taskGroups, statusDescription, modifyIndex: index, modifyTime: now };
  // Nothing left to place or to see healthy (an in-place update of healthy allocs): done now.
  const replacing = groups.some(([, b]) => b.remaining > 0 || b.replaced > 0);
  if (next.status === 'running' && !replacing && deploymentComplete(taskGroups)) next = { ...next, status: 'successful', statusDescription: SUCCESSFUL };
  if (fresh || JSON.stringify(next.taskGroups) !== JSON.stringify(d.taskGroups)) rows.push(next);
  return { rows, deploymentOf: out };
}

/** Writes `rows` (deployments) into `txn`, each with its event. */
export function putDeployments(txn: Txn, rows: readonly Deployment[]): void {
  for (const next of rows) {
    txn.putDeployment(next);
    txn.event({ topic: 'Deployment', type: 'DeploymentStatusUpdate', key: next.id, object: next });
  }
}

/**
 * Inside the plan's commit: creates or advances the job's deployment for the groups the plan
 * rolls ({@link planDeployment}, written into `txn`), and returns the deployment id each placed
 * alloc of those groups should carry.
 */
export function applyPlanToDeployment(state: AgentState, plan: Plan, job: Job | undefined, txn: Txn, now: number): Map<string, string> {
  const { rows, deploymentOf } = planDeployment(state, plan, job, { index: txn.index, now, newId: randomUUID });
  putDeployments(txn, rows);
  return deploymentOf;
}

/** Nomad's descriptions of a deployment cancelled by the scheduler. */
export const CANCELLED_NEWER_JOB = 'Cancelled due to newer version of job';
export const CANCELLED_STOPPED_JOB = 'Cancelled because job is stopped';

/**
 * Nomad's `cancelUnneededDeployments`: a deployment still under way for an older version of the
 * job (or for a job now stopped or gone) is cancelled when the job is next scheduled.
 */
function cancelUnneeded(view: DeploymentView, jobId: string, rec: DeploymentJobRow | undefined, index: number, now: number): Deployment[] {
  const rows: Deployment[] = [];
  for (const d of view.deployments.values()) {
    if (d.jobId !== jobId || (d.status !== 'running' && d.status !== 'paused')) continue;
    const stopped = !rec || rec.stop;
    if (!stopped && d.jobVersion === rec.version && d.jobCreateIndex === rec.createIndex) continue;
    rows.push({
      ...d,
      status: 'cancelled',
      statusDescription: stopped ? CANCELLED_STOPPED_JOB : CANCELLED_NEWER_JOB,
      modifyIndex: index,
      modifyTime: now,
    });
  }
  return rows;
}

/** What an alloc's health verdict leads to: another evaluation of the job, and a job version to revert to. */
export interface HealthOutcome {
  evaluate: boolean;
  /** `auto_revert`: the stable version to register again (after this commit). */
  revert?: JobRecord;
}

/**
 * An alloc's health was decided: counts it, and says what the broker should do next: evaluate
 * the job again for the next batch (or after an automatic promotion), revert the job, or nothing
 * (the deployment finished or failed).
 */
export function recordHealth(state: AgentState, alloc: Allocation, txn: Txn, now: number): HealthOutcome {
  const d = alloc.deploymentId ? state.deployments.get(alloc.deploymentId) : undefined;
  // A paused deployment still counts health (its resume goes on from there); no batch follows.
  if (!d || (d.status !== 'running' && d.status !== 'paused')) return { evaluate: false };
  const g = d.taskGroups[alloc.taskGroup];
  if (!g) return { evaluate: false };
  const healthy = alloc.deploymentStatus?.healthy === true;
  const tg = { ...g, healthyAllocs: g.healthyAllocs + (healthy ? 1 : 0), unhealthyAllocs: g.unhealthyAllocs + (healthy ? 0 : 1) };
  // Progress: a healthy alloc moves the group's deadline on (Nomad's `RequireProgressBy`).
  if (healthy && g.progressDeadlineMs > 0) tg.requireProgressBy = now + g.progressDeadlineMs;
  const taskGroups = { ...d.taskGroups, [alloc.taskGroup]: tg };
  let next: Deployment = { ...d, taskGroups, modifyIndex: txn.index, modifyTime: now };
  let revert: JobRecord | undefined;
  if (!healthy) {
    const rollback = rollbackFor(state, d, 'Failed due to unhealthy allocations', false);
    next = { ...next, status: 'failed', statusDescription: rollback.description };
    revert = rollback.revert;
  } else if (autoPromotes(next, healthyIn(state, alloc))) {
    const promoted = promotedDeployment(next, { all: true, groups: [] }, healthyIn(state, alloc));
    if (typeof promoted !== 'string') {
      const stored = commitPromotion(state, next, promoted, txn, now, alloc);
      return { evaluate: stored.status === 'running' };
    }
  } else if (deploymentComplete(taskGroups)) {
    next = { ...next, status: 'successful', statusDescription: SUCCESSFUL };
  }
  txn.putDeployment(next);
  txn.event({ topic: 'Deployment', type: 'DeploymentStatusUpdate', key: next.id, object: next });
  // A failed deployment's canaries never promoted are stopped by the next evaluation (Nomad's watcher makes one).
  const canariesLeft = next.status === 'failed' && awaitsPromotion(next.taskGroups);
  return { evaluate: next.status === 'running' || canariesLeft, ...(revert ? { revert } : {}) };
}

/** Nomad's description of a deployment that made no progress in time. */
export const FAILED_PROGRESS_DEADLINE = 'Failed due to progress deadline';

/** When the deployment must next have made progress: the earliest deadline of a group not done yet. */
export function progressCutoff(d: Deployment): number | undefined {
  let next: number | undefined;
  for (const g of Object.values(d.taskGroups)) {
    const done = g.healthyAllocs >= g.desiredTotal && (!(g.desiredCanaries ?? 0) || !!g.promoted);
    if (done || g.requireProgressBy === undefined) continue;
    if (next === undefined || g.requireProgressBy < next) next = g.requireProgressBy;
  }
  return next;
}

/**
 * The progress deadline passed (Nomad's `shouldFail`): a running deployment fails when a group has
 * fewer healthy allocs than it needs: its canaries before promotion, its total after. A paused
 * one, or one whose canaries are healthy and wait for promotion, does not.
 */
export function failsAtDeadline(d: Deployment): boolean {
  if (d.status !== 'running') return false;
  return Object.values(d.taskGroups).some((g) =>
    (g.desiredCanaries ?? 0) > 0 && !g.promoted ? g.healthyAllocs < (g.desiredCanaries ?? 0) : g.healthyAllocs < g.desiredTotal,
  );
}

/** What an operator may do to a deployment (`nomad deployment pause|resume|fail|promote`). */
export type DeploymentAction = 'pause' | 'resume' | 'fail' | 'promote';

/** Nomad's refusal texts for each action on a deployment that has ended. */
const TERMINAL_REFUSAL: Record<DeploymentAction, string> = {
  pause: "can't pause terminal deployment",
  resume: "can't resume terminal deployment",
  fail: "can't fail terminal deployment",
  promote: "can't promote terminal deployment",
};

/**
 * The deployment after `action` (pure): its new status and description, and whether the
 * scheduler should look at the job again (a resumed rollout places its next batch; a failed one
 * stops what it was placing; a promoted one replaces the old allocs). A refusal is a string,
 * Nomad's text for it. `failDescription` is a fail's description (with its rollback, if any);
 * `promote` which groups a promotion asks for and which canaries are healthy.
 */
export function deploymentAfter(
  d: Deployment,
  action: DeploymentAction,
  opts: { failDescription?: string; promote?: PromoteRequest; healthy?: (allocId: string) => boolean } = {},
): { next: Deployment; evaluate: boolean } | string {
  if (d.status !== 'running' && d.status !== 'paused') return TERMINAL_REFUSAL[action];
  switch (action) {
    case 'pause':
      return { next: { ...d, status: 'paused', statusDescription: 'Deployment is paused' }, evaluate: false };
    case 'resume':
      return { next: { ...d, status: 'running', statusDescription: runningDescription(d.taskGroups) }, evaluate: d.status === 'paused' };
    case 'fail':
      return { next: { ...d, status: 'failed', statusDescription: opts.failDescription ?? 'Deployment marked as failed' }, evaluate: true };
    case 'promote': {
      const next = promotedDeployment(d, opts.promote ?? { all: true, groups: [] }, opts.healthy ?? (() => false));
      return typeof next === 'string' ? next : { next, evaluate: true };
    }
  }
}
