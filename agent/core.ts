/**
 * The agent's server half, without HTTP: the state, the client, the broker, and the operations
 * the API offers (register, deregister, scale, stop an alloc, set the scheduler configuration).
 * The HTTP layer and the specs' in-process helpers call these; every one commits its change
 * durably before it returns.
 * @module
 */
import { realClock, type Allocation, type Client, type Clock, errorText, type Job } from '../index.ts';
import { clientChange, mergedAlloc, type ClientChange } from './allocs/client-report.ts';
import { EvalBroker, jobOf, newEval, planFor } from './broker/broker.ts';
import { deploymentAfter, failsAtDeadline, FAILED_PROGRESS_DEADLINE, progressCutoff, recordHealth, type DeploymentAction } from './deploy/deployments.ts';
import { commitPromotion, healthyIn, type PromoteRequest } from './deploy/canaries.ts';
import { rollbackFor } from './deploy/rollback.ts';
import { DeploymentWatchers } from './deploy/watchers.ts';
import { completeApiJob } from './jobspec/complete.ts';
import { cachedHostPorts } from './config/host-ports.ts';
import { schedulerNode } from './node/scheduler-node.ts';
import { ServerGc } from './gc/server-gc.ts';
import { newEvaluation, type SchedulerNode } from './scheduler/index.ts';
import type { AgentConfig, PreemptionConfig } from './config/config.ts';
import { apiJobToJob } from './jobs/jobspec.ts';
import { checkDispatch, dispatchedChild, isParentJob, sameDispatch, type DispatchRequest } from './jobs/dispatch.ts';
import { enforceIndexRefusal, scaleIndexRefusal } from './jobs/enforce-index.ts';
import { periodicProblem } from './jobs/periodic-check.ts';
import { nextJobVersion, submittedSpec } from './jobs/job-version.ts';
import {
  AllocationNotFoundError,
  DeploymentActionError,
  DeploymentNotFoundError,
  EnforceIndexError,
  EvalNotFoundError,
  InvalidJobError,
  InvalidPeriodicError,
  JobNotFoundError,
  JobNotPeriodicError,
  JobStoppedError,
  PeriodicLaunchExistsError,
  ScaleGroupNotFoundError,
} from './errors.ts';
import { JobspecParser } from './jobs/jobspec-parser.ts';
import { PeriodicDispatcher } from './periodic/dispatcher.ts';
import { jobStatus } from './state/job-status.ts';
import { formatWarnings, placementWarnings } from './jobs/placement-warnings.ts';
import type { AgentState, Txn } from './state/store.ts';
import type { ApiJob, Evaluation, JobRecord, ServerAlloc } from './state/types.ts';

/** What registering a job answers (Nomad's JobRegisterResponse). */
export interface RegisterResult {
  evalId: string;
  evalCreateIndex: number;
  jobModifyIndex: number;
  warnings: string;
  index: number;
}

/** What {@link AgentCore.planJob} answers: the scheduler's plan and the two versions it compares. */
export interface JobPlan {
  plan: ReturnType<typeof planFor>;
  /** The job as submitted. */
  apiJob: ApiJob;
  /** The job as it would be registered (its next version). */
  job: Job;
  /** The job as it is now, if it exists. */
  prev?: { apiJob: ApiJob; job: Job; jobModifyIndex: number };
  /** What placing it would warn of. */
  warnings: string[];
  /** The state's index the plan was made at. */
  index: number;
}

/**
 * The least time between two commits of client reports while they keep coming. Each commit is
 * durable (an fsync); Nomad's client batches its updates every 200 ms, and a quiet agent still
 * commits a lone report on the next turn.
 */
export const CLIENT_SYNC_INTERVAL_MS = 50;

/** The agent's operations over its state, client and broker. */
export class AgentCore {
  readonly broker: EvalBroker;
  /** One actor per running deployment, for the viewer. */
  readonly deploymentWatchers: DeploymentWatchers;
  /** The server half's garbage collector (started by the agent). */
  readonly gc: ServerGc;
  /** Job files parsed in a worker thread, off the event loop (closed by {@link AgentCore.stop}). */
  readonly jobspec = new JobspecParser();
  /** Launches periodic jobs (started by the agent once the node is registered). */
  readonly periodic: PeriodicDispatcher;

  constructor(
    readonly config: AgentConfig,
    readonly state: AgentState,
    readonly client: Client,
    readonly log: (line: string) => void,
    opts: {
      gcClock?: Clock;
      periodicClock?: Clock;
      /** A number in [0, 1) for each dynamic port pick (default `Math.random`; specs seed it). */
      random?: () => number;
      /** The ports held on the host now (default: read from /proc/net, at most once a second). */
      hostPorts?: () => number[];
      /** The clock that paces the commits of client reports (default: the real one; specs hold it). */
      syncClock?: Clock;
      /** The least time between two commits of client reports ({@link CLIENT_SYNC_INTERVAL_MS} by default). */
      clientSyncIntervalMs?: number;
      /** The clock of the deployments' progress deadlines: their timers and the check when one fires (default: the real one). */
      deploymentClock?: Clock;
    } = {},
  ) {
    this.#syncClock = opts.syncClock ?? realClock;
    this.#syncInterval = opts.clientSyncIntervalMs ?? CLIENT_SYNC_INTERVAL_MS;
    this.#hostPorts = opts.hostPorts ?? cachedHostPorts(Date.now);
    this.periodic = new PeriodicDispatcher({
      state,
      clock: opts.periodicClock ?? realClock,
      log,
      register: (child) => void this.register(child),
      live: (job) => jobStatus(job, state) !== 'dead',
    });
    this.broker = new EvalBroker({
      state,
      client,
      node: () => this.node(),
      log,
      onRefused: (report) => this.clientUpdate(report),
      random: opts.random ?? Math.random,
    });
    this.#deploymentClock = opts.deploymentClock ?? realClock;
    this.deploymentWatchers = new DeploymentWatchers(state, client, (id) => this.#progressDeadline(id), this.#deploymentClock);
    this.gc = new ServerGc({ state, client, config: config.serverGc, log, ...(opts.gcClock ? { clock: opts.gcClock } : {}) });
  }

  readonly #hostPorts: () => number[];
  readonly #deploymentClock: Clock;

  /**
   * The node as the scheduler sees it: its totals, its reserved part (host ports included), its
   * dynamic port range and the ports held on the host right now.
   */
  node(): SchedulerNode {
    return schedulerNode(this.state.node!, this.#hostPorts());
  }

  /**
   * Checks `apiJob` as {@link AgentCore.register} would, and writes nothing (Nomad's
   * `Job.Validate`): throws the error register would answer with, or returns the warnings
   * register would give (`warnings`, what the submitted job set that berth changes, first).
   */
  validate(apiJob: ApiJob, warnings: readonly string[] = []): string {
    const job = decodeJob(apiJob);
    const periodic = periodicProblem(apiJob, Date.now());
    if (periodic) throw new InvalidPeriodicError(periodic);
    return formatWarnings([...warnings, ...placementWarnings(job)]);
  }

  /**
   * Registers a new version of `apiJob` and queues its evaluation. `opts.warnings` join the
   * response's own (what the submitted job set that berth changes or ignores).
   */
  register(
    apiJob: ApiJob,
    opts: { enforceIndex?: boolean; jobModifyIndex?: number; warnings?: readonly string[] } = {},
    trigger: 'job-register' | 'job-scaling' = 'job-register',
  ): RegisterResult {
    const job = decodeJob(apiJob);
    const periodic = periodicProblem(apiJob, Date.now());
    if (periodic) throw new InvalidPeriodicError(periodic);
    const prev = this.state.jobs.get(apiJob.ID);
    if (opts.enforceIndex) {
      const want = opts.jobModifyIndex ?? 0;
      const refusal = enforceIndexRefusal(prev?.jobModifyIndex, want);
      if (refusal) throw new EnforceIndexError(apiJob.ID, want, refusal, refusal === 'conflict' ? prev?.jobModifyIndex : undefined);
    }
    const result = this.state.commit((txn) => {
      const version = nextJobVersion(prev, apiJob);
      const now = Date.now();
      const record: JobRecord = {
        id: apiJob.ID,
        namespace: (apiJob.Namespace as string | undefined) ?? 'default',
        version,
        // Kept with every field of Nomad's API job (unset ones zero), as Nomad's servers keep and serve it.
        apiJob: completeApiJob({
          ...apiJob,
          Version: version,
          Stop: false,
          Status: 'pending',
          SubmitTime: now * 1e6,
          CreateIndex: prev?.createIndex ?? txn.index,
          ModifyIndex: txn.index,
          JobModifyIndex: txn.index,
        }),
        createIndex: prev?.createIndex ?? txn.index,
        modifyIndex: txn.index,
        jobModifyIndex: txn.index,
        submitTime: now,
        modifyTime: now,
        stop: false,
      };
      txn.putJob(record);
      txn.event({ topic: 'Job', type: 'JobRegistered', key: record.id, object: record });
      const warnings = formatWarnings([...(opts.warnings ?? []), ...placementWarnings(job)]);
      // A parameterized or periodic parent is never placed itself (Nomad makes no eval for it): its children are.
      if (isParentJob(job)) return { evalId: '', evalCreateIndex: 0, jobModifyIndex: txn.index, warnings, index: txn.index };
      const ev = newEval(txn, this.state, record.id, trigger, {}, record);
      return { evalId: ev.id, evalCreateIndex: txn.index, jobModifyIndex: txn.index, warnings, index: txn.index };
    });
    if (result.evalId) this.broker.enqueue(result.evalId);
    if (job.periodic || prev?.apiJob.Periodic) this.periodic.sync();
    return result;
  }

  /**
   * Dispatches a parameterized job (Nomad's `Job.Dispatch`): checks the request against the
   * parent, registers the child job and its evaluation. With an idempotency token that a live
   * child already carries, answers that child instead of making another.
   */
  dispatch(parentId: string, req: DispatchRequest): RegisterResult & { dispatchedJobId: string; jobCreateIndex: number } {
    const parent = this.state.jobs.get(parentId);
    if (!parent) throw new JobNotFoundError(parentId);
    if (parent.stop) throw new JobStoppedError(parentId, 'dispatch');
    checkDispatch(parent.apiJob, req);
    if (req.idempotencyToken) {
      const same = sameDispatch(this.state.jobs.values(), parentId, req.idempotencyToken, (j) => jobStatus(j, this.state) !== 'dead');
      if (same)
        return {
          evalId: '',
          evalCreateIndex: 0,
          jobModifyIndex: same.jobModifyIndex,
          warnings: '',
          index: this.state.waiters.index,
          dispatchedJobId: same.id,
          jobCreateIndex: same.createIndex,
        };
    }
    const child = dispatchedChild(parent.apiJob, req, Date.now());
    const r = this.register(child);
    return { ...r, dispatchedJobId: child.ID, jobCreateIndex: r.jobModifyIndex };
  }

  /**
   * Stops (or, with `purge`, forgets) a job; its allocs are stopped by the evaluation. A purge
   * drops the job, its versions and deployments now; its evaluations and allocations go as soon
   * as they are terminal (the server GC).
   */
  deregister(jobId: string, purge: boolean): { evalId: string; jobModifyIndex: number; index: number } {
    const prev = this.state.jobs.get(jobId);
    if (!prev) throw new JobNotFoundError(jobId);
    const out = this.state.commit((txn) => {
      let rec: JobRecord | undefined;
      if (purge) {
        txn.deleteJob(jobId);
        for (const d of this.state.deployments.values()) if (d.jobId === jobId) txn.deleteDeployment(d.id);
        txn.event({ topic: 'Job', type: 'JobDeregistered', key: jobId, object: prev });
      } else {
        rec = {
          ...prev,
          stop: true,
          modifyTime: Date.now(),
          modifyIndex: txn.index,
          jobModifyIndex: txn.index,
          apiJob: { ...prev.apiJob, Stop: true, ModifyIndex: txn.index, JobModifyIndex: txn.index },
        };
        txn.putJob(rec);
        txn.event({ topic: 'Job', type: 'JobDeregistered', key: jobId, object: rec });
      }
      const ev = newEval(
        txn,
        this.state,
        jobId,
        'job-deregister',
        { priority: (prev.apiJob.Priority as number) ?? 50, type: (prev.apiJob.Type as 'service') ?? 'service', jobModifyIndex: txn.index },
        rec,
      );
      return { evalId: ev.id, jobModifyIndex: txn.index, index: txn.index };
    });
    this.broker.enqueue(out.evalId);
    if (prev.apiJob.Periodic) this.periodic.sync();
    return out;
  }

  /** Launches a periodic job now (Nomad's `periodic force`): the child's evaluation. */
  forcePeriodic(jobId: string): { evalId: string; evalCreateIndex: number; index: number } {
    const rec = this.state.jobs.get(jobId);
    if (!rec) throw new JobNotFoundError(jobId);
    if (!rec.apiJob.Periodic || rec.apiJob.ParentID) throw new JobNotPeriodicError(jobId);
    if (rec.stop) throw new JobStoppedError(jobId, 'periodic-force');
    const child = this.periodic.force(jobId);
    const ev = child ? [...this.state.evals.values()].find((e) => e.jobId === child) : undefined;
    if (!ev) throw new PeriodicLaunchExistsError(jobId);
    return { evalId: ev.id, evalCreateIndex: ev.createIndex, index: this.state.waiters.index };
  }

  /**
   * Sets a group's count (Nomad's job scale): a new job version. A `jobModifyIndex` other than 0
   * applies only at that index of the job (Nomad's check-and-set on `ScalingRequest`).
   */
  scale(jobId: string, group: string, count: number, jobModifyIndex = 0): RegisterResult {
    const prev = this.state.jobs.get(jobId);
    if (!prev) throw new JobNotFoundError(jobId);
    if (scaleIndexRefusal(prev.jobModifyIndex, jobModifyIndex)) throw new EnforceIndexError(jobId, jobModifyIndex, 'conflict', prev.jobModifyIndex);
    const groups = (prev.apiJob.TaskGroups as Array<Record<string, unknown>>) ?? [];
    if (!groups.some((g) => g.Name === group)) throw new ScaleGroupNotFoundError(jobId, group);
    const spec = submittedSpec(prev.apiJob);
    return this.register({ ...spec, ID: prev.id, TaskGroups: groups.map((g) => (g.Name === group ? { ...g, Count: count } : g)) }, {}, 'job-scaling');
  }

  /** Nomad's alloc stop: the alloc is stopped and a replacement placed. */
  stopAlloc(allocId: string): { evalId: string; index: number } {
    const cur = this.state.allocs.get(allocId);
    if (!cur) throw new AllocationNotFoundError(allocId);
    const out = this.state.commit((txn) => {
      const alloc: Allocation = {
        ...cur.alloc,
        desiredStatus: 'stop',
        desiredDescription: 'alloc was stopped by the user',
        allocModifyIndex: txn.index,
        modifyTime: Date.now(),
      };
      const s: ServerAlloc = { ...cur, alloc, modifyIndex: txn.index };
      txn.putAlloc(s);
      txn.event({ topic: 'Allocation', type: 'AllocationUpdated', key: allocId, object: s });
      const ev = newEval(txn, this.state, cur.alloc.jobId, 'alloc-stop');
      return { evalId: ev.id, index: txn.index, alloc };
    });
    try {
      this.client.updateAlloc(out.alloc);
    } catch (e) {
      this.log(`alloc stop: ${errorText(e)}`);
    }
    this.broker.enqueue(out.evalId);
    return { evalId: out.evalId, index: out.index };
  }

  /**
   * Allocs the client can no longer account for (its state store was repaired or lost): each is
   * marked `lost` as the client would report it, and each job gets one `node-update` evaluation,
   * as Nomad's servers evaluate the jobs of a node's lost allocs, so the scheduler replaces them.
   */
  allocsLost(lost: Allocation[]): void {
    for (const a of lost) this.clientUpdate(a);
    const jobs = [...new Set(lost.map((a) => a.jobId))].filter((id) => this.state.jobs.has(id));
    if (!jobs.length) return;
    const ids = this.state.commit((txn) => jobs.map((id) => newEval(txn, this.state, id, 'node-update').id));
    for (const id of ids) this.broker.enqueue(id);
  }

  /** Nomad's job evaluate: a new evaluation of the job as it is (`job-eval`). */
  evaluate(jobId: string): { evalId: string; evalCreateIndex: number; jobModifyIndex: number; index: number } {
    const job = this.state.jobs.get(jobId);
    if (!job) throw new JobNotFoundError(jobId);
    const out = this.state.commit((txn) => {
      const ev = newEval(txn, this.state, jobId, 'job-eval');
      return { evalId: ev.id, evalCreateIndex: txn.index, jobModifyIndex: job.jobModifyIndex, index: txn.index };
    });
    this.broker.enqueue(out.evalId);
    return out;
  }

  /**
   * An operator's pause, resume, fail or promote of a deployment (Nomad's deployment endpoints).
   * A resumed rollout, or a failed one, gets a `deployment-watcher` evaluation of its job.
   */
  deploymentAction(
    id: string,
    action: DeploymentAction,
    promote: PromoteRequest = { all: true, groups: [] },
  ): { evalId?: string; evalCreateIndex?: number; deploymentModifyIndex: number; index: number; revertedJobVersion?: number } {
    const d = this.state.deployments.get(id);
    if (!d) throw new DeploymentNotFoundError(id);
    const rollback =
      action === 'fail' && (d.status === 'running' || d.status === 'paused') ? rollbackFor(this.state, d, 'Deployment marked as failed', true) : undefined;
    const after = deploymentAfter(d, action, { failDescription: rollback?.description, promote, healthy: healthyIn(this.state) });
    if (typeof after === 'string') throw new DeploymentActionError(id, after);
    const out = this.state.commit((txn) => {
      const now = Date.now();
      if (action === 'promote') commitPromotion(this.state, d, after.next, txn, now);
      else {
        const next = { ...after.next, modifyIndex: txn.index, modifyTime: now };
        txn.putDeployment(next);
        txn.event({ topic: 'Deployment', type: 'DeploymentStatusUpdate', key: id, object: next });
      }
      const ev = after.evaluate && this.state.jobs.has(d.jobId) ? newEval(txn, this.state, d.jobId, 'deployment-watcher') : undefined;
      return { ...(ev ? { evalId: ev.id, evalCreateIndex: txn.index } : {}), deploymentModifyIndex: txn.index, index: txn.index };
    });
    if (out.evalId) this.broker.enqueue(out.evalId);
    if (rollback?.revert) return { ...out, revertedJobVersion: this.#revert(rollback.revert) };
    return out;
  }

  /**
   * A deployment's progress deadline passed (its watcher's timer): fails it, with its rollback,
   * if too few of its allocs turned healthy (Nomad's "Failed due to progress deadline").
   */
  #progressDeadline(id: string): void {
    const d = this.state.deployments.get(id);
    if (!d || !failsAtDeadline(d)) return;
    const cutoff = progressCutoff(d);
    if (cutoff === undefined || cutoff > this.#deploymentClock.now()) return;
    const rollback = rollbackFor(this.state, d, FAILED_PROGRESS_DEADLINE, false);
    const ev = this.state.commit((txn) => {
      const next = { ...d, status: 'failed' as const, statusDescription: rollback.description, modifyIndex: txn.index, modifyTime: Date.now() };
      txn.putDeployment(next);
      txn.event({ topic: 'Deployment', type: 'DeploymentStatusUpdate', key: id, object: next });
      return this.state.jobs.has(d.jobId) ? newEval(txn, this.state, d.jobId, 'deployment-watcher') : undefined;
    });
    if (ev) this.broker.enqueue(ev.id);
    if (rollback.revert) this.#revert(rollback.revert);
  }

  /** `auto_revert`: registers the stable version's spec again, as a new version (Nomad's job revert); answers the version reverted to. */
  #revert(target: JobRecord): number {
    this.register(target.apiJob);
    return target.version;
  }

  /**
   * Sets the scheduler's preemption settings. With `cas` (Nomad's `?cas=`), only when the
   * configuration's modify index is still `cas`: otherwise nothing changes and `updated` is false.
   */
  setPreemption(p: Partial<PreemptionConfig>, cas?: number): { updated: boolean; index: number } {
    const cur = this.state.schedulerConfig!;
    if (cas !== undefined && cas !== cur.modifyIndex) return { updated: false, index: cur.modifyIndex };
    const index = this.state.commit((txn) => {
      txn.putSchedulerConfig({ ...cur, preemption: { ...cur.preemption, ...p }, modifyIndex: txn.index });
      return txn.index;
    });
    return { updated: true, index };
  }

  /**
   * What registering `apiJob` would do, without doing it (Nomad's job plan): the scheduler's plan
   * for the job at the version it would get, beside the job as it is now. The HTTP edge shapes
   * Nomad's reply (and the diff) from it.
   */
  planJob(apiJob: ApiJob): JobPlan {
    const job = decodeJob(apiJob);
    const prev = this.state.jobs.get(apiJob.ID);
    const next = { ...job, version: nextJobVersion(prev, apiJob) };
    const jobs = [...this.state.jobs.values()].filter((j) => j.id !== apiJob.ID).map(jobOf);
    const ev = { ...newEvaluation({ id: 'plan', job: next, triggeredBy: 'job-register', now: Date.now() }), createIndex: 0, modifyIndex: 0 };
    return {
      plan: planFor(this.state, this.node(), ev, [...jobs, next]),
      apiJob,
      job: next,
      ...(prev ? { prev: { apiJob: prev.apiJob, job: jobOf(prev), jobModifyIndex: prev.jobModifyIndex } } : {}),
      warnings: placementWarnings(job),
      index: this.state.waiters.index,
    };
  }

  /**
   * Takes the client's report of an alloc (status, task states, health) into the server's view.
   * Health is the client's verdict (machines/policy/alloc-health.ts, decided by its health hook);
   * the server only counts it, and marks unhealthy a deployment alloc that ended with none.
   */
  clientUpdate(a: Allocation): void {
    this.clientUpdates([a]);
  }

  /**
   * Queues a client report for one commit with the others ({@link AgentCore.clientUpdates}), as
   * Nomad's client sends its alloc updates in batches (every 200 ms). The first report after a
   * quiet spell is committed on the next turn of the event loop; while reports keep coming, one
   * commit each {@link CLIENT_SYNC_INTERVAL_MS} at most takes all that arrived meanwhile, so a
   * burst of 1,000 allocs costs a few durable commits, not one per turn. Nothing waits on the
   * answer, and a report lost to a kill before its commit is made again by the client's
   * restore. After {@link AgentCore.stop}, taken at once.
   */
  queueClientUpdate(a: Allocation): void {
    if (this.#stopped) return this.clientUpdate(a);
    this.#queued.push(a);
    if (this.#flush) return;
    const wait = this.#lastSync + this.#syncInterval - this.#syncClock.now();
    if (wait > 0) {
      const t = this.#syncClock.setTimeout(() => this.flushClientUpdates(), wait);
      this.#flush = () => this.#syncClock.clearTimeout(t);
    } else {
      const i = setImmediate(() => this.flushClientUpdates());
      this.#flush = () => clearImmediate(i);
    }
  }

  /** Commits the reports {@link AgentCore.queueClientUpdate} holds, now. */
  flushClientUpdates(): void {
    this.#flush?.();
    this.#flush = undefined;
    const batch = this.#queued.splice(0);
    // A start that failed closed the state under a queued batch: the client's restore reports it again.
    if (!batch.length || this.state.closed) return;
    this.clientUpdates(batch);
    this.#lastSync = this.#syncClock.now();
  }

  #queued: Allocation[] = [];
  /** Cancels the flush that is set, if one is. */
  #flush: (() => void) | undefined;
  /** When the last batch of client reports was committed (the sync clock's ms). */
  #lastSync = -Infinity;
  readonly #syncClock: Clock;
  readonly #syncInterval: number;
  #stopped = false;

  /**
   * Takes several client reports: the last of each alloc counts (Nomad's client coalesces them
   * too), and all land in one commit, except those that decide a deployment's health: each of
   * those reads the deployment the one before left, so each gets a commit of its own, after.
   */
  clientUpdates(reports: readonly Allocation[]): void {
    const last = new Map<string, Allocation>();
    for (const a of reports) {
      last.delete(a.id);
      last.set(a.id, a);
    }
    const plain: ClientChange[] = [];
    const deciding: ClientChange[] = [];
    for (const a of last.values()) {
      const c = this.#clientChange(a);
      if (c) (c.decided ? deciding : plain).push(c);
    }
    const out: Array<{ ev?: Evaluation; revert?: JobRecord }> = [];
    if (plain.length) this.state.commit((txn) => plain.forEach((c) => out.push(this.#applyClientChange(c, txn))));
    for (const c of deciding) out.push(this.state.commit((txn) => this.#applyClientChange(c, txn)));
    for (const o of out) if (o.ev) this.broker.enqueue(o.ev.id);
    for (const o of out) if (o.revert) this.#revert(o.revert);
    if ([...plain, ...deciding].some((c) => c.ended)) this.broker.unblock();
  }

  /** What report `a` changes in the server's alloc; undefined when nothing (or no such alloc). */
  #clientChange(a: Allocation): ClientChange | undefined {
    const cur = this.state.allocs.get(a.id);
    if (!cur) return undefined;
    return clientChange(cur, a, cur.alloc.deploymentId ? this.state.deployments.get(cur.alloc.deploymentId) : undefined, Date.now());
  }

  /** Writes one {@link ClientChange} in `txn`: the alloc, and the deployment's count when it decides one. */
  #applyClientChange(c: ClientChange, txn: Txn): { ev?: Evaluation; revert?: JobRecord } {
    const alloc = mergedAlloc(c, Date.now());
    const s: ServerAlloc = { ...c.cur, alloc, modifyIndex: txn.index };
    txn.putAlloc(s);
    txn.event({ topic: 'Allocation', type: 'AllocationUpdated', key: alloc.id, object: s });
    const outcome = c.decided ? recordHealth(this.state, alloc, txn, Date.now()) : { evaluate: false };
    return {
      ...(outcome.evaluate ? { ev: newEval(txn, this.state, alloc.jobId, 'deployment-watcher') } : {}),
      ...(outcome.revert ? { revert: outcome.revert } : {}),
    };
  }

  /** Stops the broker, the collector, the periodic dispatcher and the job file worker. */
  async stop(): Promise<void> {
    this.flushClientUpdates();
    this.#stopped = true;
    this.periodic.stop();
    await this.jobspec.close();
    await this.gc.stop();
    await this.broker.stop();
    this.deploymentWatchers.stop();
  }

  /** Pending evaluations left by an earlier run, queued again in order. */
  resumeEvals(): void {
    const pending = [...this.state.evals.values()].filter((e) => e.status === 'pending').sort((x, y) => x.createIndex - y.createIndex);
    for (const e of pending) this.broker.enqueue(e.id);
  }

  /** An evaluation; {@link EvalNotFoundError} when there is none. */
  evaluation(id: string): Evaluation {
    const e = this.state.evals.get(id);
    if (!e) throw new EvalNotFoundError(id);
    return e;
  }
}

/** The API job as berth's job; {@link InvalidJobError} with the reason for one berth cannot take. */
function decodeJob(apiJob: ApiJob): Job {
  try {
    return apiJobToJob(apiJob);
  } catch (e) {
    throw new InvalidJobError(errorText(e));
  }
}
