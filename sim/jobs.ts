/**
 * Jobs in the simulator: ops that register, update and stop jobs, run berth's one-node scheduler
 * (`agent/scheduler`) on each evaluation, and feed its plan to the simulated client (`addAlloc`
 * for placements, `updateAlloc` for stops, evictions and in-place updates), as the agent does.
 * A `jobTick` is the agent's evaluation broker: it retries blocked evals, runs due follow-ups and
 * failed-alloc evals, and marks running allocs healthy so rolling updates proceed.
 *
 * Everything is deterministic: the ops come from their own random stream (the other ops of a seed
 * stay what they were), ids are counters, dynamic ports are picked with a seeded source.
 * @module
 */
import { isClientTerminalStatus, isServerTerminal } from '../model/status.ts';
import type { Allocation, Job } from '../model/types.ts';
import type { Client } from '../actors/client/types.ts';
import {
  blockedEvalsToRetry,
  isReady,
  newEvaluation,
  schedule,
  type EvalTrigger,
  type Plan,
  type SchedulerConfiguration,
  type SchedulerNode,
} from '../agent/scheduler/index.ts';
import { addComparable, allocComparable, emptyComparable, exhaustedDimension, nodeAvailable } from '../agent/scheduler/resources.ts';
import { applyPlan, type PlanView } from '../agent/broker/apply-plan.ts';
import type { DeploymentJobRow } from '../agent/deploy/deployments.ts';
import type { Deployment, Evaluation, ServerAlloc } from '../agent/state/types.ts';
import { SIM_DRIVER } from './driver.ts';
import { Rng } from './random.ts';

/**
 * The group a job runs: the same shape as the simulator's generated alloc groups (`AllocSpec` in
 * ops.ts, which imports this file), as far as jobs use it.
 */
export interface GroupSpec {
  type: 'service' | 'batch';
  tasks: Array<{
    name: string;
    hook?: 'prestart' | 'poststart' | 'poststop';
    sidecar?: boolean;
    killTimeoutMs: number;
    killSignal: string;
    lifetimeMs?: number;
    exitCode: number;
    shutdownDelayMs?: number;
  }>;
  restart: { attempts: number; intervalMs: number; delayMs: number; mode: 'fail' | 'delay' };
  sticky?: boolean;
  shutdownDelayMs?: number;
  maxRunDurationMs?: number;
  /** Set on a placed alloc that carries a deployment: its update block's `min_healthy_time` (sim/health.ts checks it). */
  deploymentMinHealthyMs?: number;
}

/** A job op, at a virtual time in ms from the start. */
export type JobOp =
  | {
      at: number;
      op: 'jobRegister';
      job: number;
      spec: GroupSpec;
      count: number;
      priority: number;
      cpu: number;
      memoryMB: number;
      /** Dynamic ports per alloc. */
      ports: number;
      /** A rolling update's `max_parallel`. */
      maxParallel?: number;
      /** Failed allocs are rescheduled (constant delay). */
      rescheduleDelayMs?: number;
    }
  | { at: number; op: 'jobUpdate'; job: number; change: 'destructive' | 'count' | 'inplace'; count?: number }
  | { at: number; op: 'jobStop'; job: number }
  | { at: number; op: 'jobTick' };

/** The simulated node: small, so jobs compete and preempt; a short dynamic port range. */
export const SIM_NODE: SchedulerNode = {
  id: 'node-1',
  name: 'sim',
  datacenter: 'dc1',
  resources: { cpuMHz: 4000, memoryMB: 4096, diskMB: 100_000, cores: 2 },
  reserved: { cpuMHz: 100, memoryMB: 0, ports: [20001] },
  minDynamicPort: 20000,
  maxDynamicPort: 20020,
};

/** A scheduler-made alloc id: a valid UUID, `j<n>` in traces. */
export function jobAllocUuid(n: number): string {
  return `0000000c-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

/**
 * Adds job ops from a stream of their own: up to three jobs registered at random times, then
 * updates, stops and broker ticks. Merged by time; a job op goes after the ops of the same instant.
 */
export function withJobOps<T extends { at: number }>(seed: number, ops: T[], genSpec: (r: Rng) => GroupSpec): Array<T | JobOp> {
  const r = new Rng(seed).fork('jobs');
  if (!r.chance(0.6)) return ops;
  const end = ops.length ? ops[ops.length - 1]!.at : 0;
  const extra: JobOp[] = [];
  const jobs = r.int(1, 3);
  for (let j = 0; j < jobs; j++) {
    let at = r.int(0, Math.max(1, end));
    const spec = genSpec(r);
    const reg: Extract<JobOp, { op: 'jobRegister' }> = {
      at,
      op: 'jobRegister',
      job: j,
      spec,
      count: r.int(1, 3),
      priority: r.pick([20, 50, 80, 100]),
      cpu: r.pick([500, 1000, 1500]),
      memoryMB: r.pick([256, 1024, 2048]),
      ports: r.int(0, 2),
    };
    if (r.chance(0.4)) reg.maxParallel = r.int(1, 2);
    if (r.chance(0.5)) reg.rescheduleDelayMs = r.pick([0, 500, 5000]);
    extra.push(reg);
    const more = r.int(0, 3);
    for (let k = 0; k < more; k++) {
      at += r.int(200, 6000);
      const roll = r.next();
      if (roll < 0.45) extra.push({ at, op: 'jobUpdate', job: j, change: 'destructive' });
      else if (roll < 0.7) extra.push({ at, op: 'jobUpdate', job: j, change: 'count', count: r.int(0, 4) });
      else if (roll < 0.85) extra.push({ at, op: 'jobUpdate', job: j, change: 'inplace' });
      else extra.push({ at, op: 'jobStop', job: j });
    }
  }
  // The broker runs every few seconds for a while after the last job op.
  const last = Math.max(...extra.map((o) => o.at));
  for (let at = r.int(500, 3000); at < last + 20_000; at += r.int(1000, 5000)) extra.push({ at, op: 'jobTick' });
  extra.sort((a, b) => a.at - b.at);
  const out: Array<T | JobOp> = [...ops];
  for (const e of extra) {
    const i = out.findIndex((o) => o.at > e.at);
    out.splice(i < 0 ? out.length : i, 0, e);
  }
  return out;
}

/** What the job world needs from the simulation around it. */
export interface JobSimEnv {
  seed: number;
  now: () => number;
  log: (line: string) => void;
  /** The live host's client (a crash replaces it). */
  client: () => Client;
  /** Process behaviour per alloc id (the world's table reads it). */
  specs: Map<string, GroupSpec>;
  /** Tell the checker whom a new alloc must wait for. */
  waitsFor: (allocId: string, prev: string | undefined, preempted: string[]) => void;
  /** A plan broke one of the scheduler's own rules. */
  fail: (message: string, allocId?: string) => void;
}

/** The agent's side for jobs: the job and eval store, the broker, the scheduler in the loop. */
export class JobSim {
  /** Each job with the indexes a deployment records (its first register's, its last change's). */
  private readonly jobs = new Map<number, { job: Job; spec: GroupSpec; createIndex: number; jobModifyIndex: number }>();
  /** The server's alloc rows, as the agent's store keeps them (preemptedBy, nextAllocation). */
  private readonly allocs = new Map<string, ServerAlloc>();
  private readonly evals = new Map<string, Evaluation>();
  private readonly deployments = new Map<string, Deployment>();
  private readonly config: SchedulerConfiguration;
  private readonly random: () => number;
  private ids = 0;
  /** Deployment ids count apart, so alloc and eval ids stay what they were. */
  private deploymentIds = 0;
  private index = 1000;
  /** Jobs with a rolling update still under way. */
  private readonly rollouts = new Set<string>();
  /** Terminal job allocs at the last blocked-eval retry. */
  private freed = 0;

  constructor(private readonly env: JobSimEnv) {
    const r = new Rng(env.seed).fork('jobs:config');
    this.config = {
      preemptionConfig: {
        serviceSchedulerEnabled: r.chance(0.6),
        batchSchedulerEnabled: r.chance(0.4),
        sysbatchSchedulerEnabled: false,
        systemSchedulerEnabled: true,
      },
    };
    const ports = new Rng(env.seed).fork('jobs:ports');
    this.random = () => ports.next();
  }

  /** Apply one job op. */
  apply(op: JobOp): void {
    switch (op.op) {
      case 'jobRegister': {
        const job = this.toJob(op, 0);
        this.jobs.set(op.job, { job, spec: op.spec, createIndex: this.index, jobModifyIndex: this.index });
        this.evaluate(job, 'job-register');
        break;
      }
      case 'jobUpdate': {
        const cur = this.jobs.get(op.job);
        if (!cur || cur.job.stop) return this.env.log('  (no such job)');
        const job: Job = structuredClone(cur.job);
        job.version = (cur.job.version ?? 0) + 1;
        const g = job.taskGroups[0]!;
        if (op.change === 'destructive') for (const t of g.tasks) t.env = { VERSION: String(job.version) };
        else if (op.change === 'count') g.count = op.count ?? 1;
        else g.shutdownDelayMs = g.shutdownDelayMs ? undefined : 100;
        this.jobs.set(op.job, { ...cur, job, jobModifyIndex: this.index });
        this.evaluate(job, 'job-register');
        break;
      }
      case 'jobStop': {
        const cur = this.jobs.get(op.job);
        if (!cur) return this.env.log('  (no such job)');
        const job = { ...cur.job, stop: true, version: (cur.job.version ?? 0) + 1 };
        this.jobs.set(op.job, { ...cur, job, jobModifyIndex: this.index });
        this.evaluate(job, 'job-deregister');
        break;
      }
      case 'jobTick':
        this.tick();
        break;
    }
    this.drain();
  }

  /**
   * The broker: health, failed allocs, rolling batches, and the blocked evals once room was freed
   * (an alloc of a job stopped, finished, failed or was evicted since the last retry).
   */
  private tick(): void {
    // Health as the deployment watcher would see it: a running alloc is healthy.
    for (const a of this.view()) {
      if (a.clientStatus === 'running' && a.deploymentStatus?.healthy === undefined) {
        const row = this.allocs.get(a.id)!;
        this.allocs.set(a.id, { ...row, alloc: { ...row.alloc, deploymentStatus: { healthy: true, timestamp: this.env.now() } } });
      }
    }
    const withFailures = new Set<string>();
    for (const a of this.view()) if (a.clientStatus === 'failed' && a.desiredStatus === 'run' && !a.followupEvalId) withFailures.add(a.jobId);
    for (const { job } of this.jobs.values()) {
      if (withFailures.has(job.id)) this.evaluate(job, 'alloc-failure');
      else if (this.rollouts.has(job.id) && !job.stop) this.evaluate(job, 'deployment-watcher');
    }
    const freed = this.view().filter((a) => isServerTerminal(a) || isClientTerminalStatus(a.clientStatus)).length;
    if (freed > this.freed) {
      this.freed = freed;
      for (const ev of blockedEvalsToRetry([...this.evals.values()]) as Evaluation[]) this.process(ev);
    }
  }

  /** Process every pending eval that is due, oldest first. */
  private drain(): void {
    for (let guard = 0; guard < 50; guard++) {
      const next = [...this.evals.values()].filter((e) => isReady(e, this.env.now())).sort((a, b) => a.createTime - b.createTime || (a.id < b.id ? -1 : 1))[0];
      if (!next) return;
      this.process(next);
    }
  }

  private evaluate(job: Job, triggeredBy: EvalTrigger): void {
    this.process({ ...newEvaluation({ id: this.newId('e'), job, triggeredBy, now: this.env.now() }), createIndex: this.index, modifyIndex: this.index });
  }

  private process(ev: Evaluation): void {
    const snapshotIndex = this.index;
    const plan = schedule({
      node: SIM_NODE,
      jobs: [...this.jobs.values()].map((j) => j.job),
      allocs: this.view(),
      config: this.config,
      eval: ev,
      now: this.env.now(),
      newId: () => this.newId('a'),
      random: this.random,
      index: ++this.index,
    });
    this.env.log(
      `  eval ${ev.triggeredBy} ${ev.jobId}: place ${plan.place.map((a) => `${alias(a.id)}=${a.name}`).join(',') || '-'} stop ${plan.stop.map((a) => alias(a.id)).join(',') || '-'} evict ${plan.preempt.map((a) => alias(a.id)).join(',') || '-'} inplace ${plan.inPlace.length} queued ${JSON.stringify(plan.queued)} -> ${plan.eval.status}`,
    );
    this.commit(plan, ev, snapshotIndex);
    this.check(plan);
    const rolling = Object.values(plan.deployment).some((d) => d.remaining > 0);
    if (rolling) this.rollouts.add(ev.jobId);
    else this.rollouts.delete(ev.jobId);
  }

  /**
   * The scheduler's own rules, over what the node runs after the plan: allocs desired to run (and
   * not yet client-terminal) fit the node and share no port or core; every victim is evicted.
   */
  private check(plan: Plan): void {
    const running = this.view().filter((a) => !isServerTerminal(a) && !isClientTerminalStatus(a.clientStatus));
    const free = nodeAvailable(SIM_NODE);
    const used = running.reduce((sum, a) => addComparable(sum, allocComparable(a)), emptyComparable());
    const dim = exhaustedDimension(free, { ...used, cores: [] });
    if (dim)
      this.env.fail(`scheduler: the node is over-committed (${dim}): ${used.cpu} MHz, ${used.memoryMB} MB for ${running.map((a) => alias(a.id)).join(',')}`);
    if (new Set(used.cores).size !== used.cores.length) this.env.fail(`scheduler: a core is given twice: ${used.cores.join(',')}`);
    const ports = new Map<number, string>();
    for (const a of running) {
      for (const p of a.allocatedResources?.shared.ports ?? []) {
        const other = ports.get(p.value);
        if (other) this.env.fail(`scheduler: port ${p.value} given to ${other} and ${alias(a.id)}`, a.id);
        if (SIM_NODE.reserved?.ports?.includes(p.value)) this.env.fail(`scheduler: reserved port ${p.value} given to ${alias(a.id)}`, a.id);
        ports.set(p.value, alias(a.id));
      }
    }
    for (const a of plan.place) {
      for (const v of a.preemptedAllocations ?? []) {
        if (this.allocs.get(v)?.alloc.desiredStatus !== 'evict') this.env.fail(`scheduler: ${alias(a.id)} preempted ${alias(v)}, which is not evicted`, a.id);
      }
    }
  }

  /**
   * Store the plan and hand it to the client, as the broker does: the same plan application
   * (agent/broker/apply-plan.ts), its rows into the simulator's maps, its calls to the client.
   */
  private commit(plan: Plan, ev: Evaluation, snapshotIndex: number): void {
    const client = this.env.client();
    const job = [...this.jobs.values()].find((j) => j.job.id === ev.jobId);
    const applied = applyPlan(this.planView(), plan, ev, job?.job, {
      index: this.index,
      snapshotIndex,
      now: this.env.now(),
      newId: () => `0000000d-0000-4000-8000-${(++this.deploymentIds).toString(16).padStart(12, '0')}`,
    });
    for (const w of applied.writes) {
      if (w.table === 'alloc') this.allocs.set(w.row.alloc.id, w.row);
      else if (w.table === 'eval') this.evals.set(w.row.id, w.row);
      else this.deployments.set(w.row.id, w.row);
    }
    for (const { kind, alloc } of applied.clientCalls) {
      if (kind === 'update') {
        // An alloc updated in place may join a deployment now.
        if (alloc.deploymentId && this.env.specs.has(alloc.id)) this.env.specs.set(alloc.id, this.specOf(alloc));
        if (client.runner(alloc.id)) client.updateAlloc(alloc);
        else this.env.log(`  (${alias(alloc.id)} has no runner)`);
        continue;
      }
      this.env.specs.set(alloc.id, this.specOf(alloc));
      this.env.waitsFor(alloc.id, alloc.previousAllocation, alloc.preemptedAllocations ?? []);
      client.addAlloc(alloc);
    }
  }

  /** The process behaviour of a job alloc; in a deployment the client judges health by the group's update block (as Nomad's does). */
  private specOf(alloc: Allocation): GroupSpec {
    const { spec, job } = [...this.jobs.values()].find((j) => j.job.id === alloc.jobId)!;
    const minHealthy = job.taskGroups.find((g) => g.name === alloc.taskGroup)?.update?.minHealthyTimeMs;
    return alloc.deploymentId && minHealthy !== undefined ? { ...spec, deploymentMinHealthyMs: minHealthy } : spec;
  }

  /** What plan application reads: the alloc rows with the client's view, the jobs, evals and deployments. */
  private planView(): PlanView {
    const viewed = new Map(this.view().map((a) => [a.id, a]));
    const allocs = new Map<string, ServerAlloc>();
    for (const [id, row] of this.allocs) allocs.set(id, { ...row, alloc: viewed.get(id)! });
    const jobs = new Map<string, DeploymentJobRow>();
    for (const j of this.jobs.values())
      jobs.set(j.job.id, {
        id: j.job.id,
        namespace: 'default',
        version: j.job.version ?? 0,
        jobModifyIndex: j.jobModifyIndex,
        createIndex: j.createIndex,
        stop: !!j.job.stop,
      });
    return { allocs, jobs, evals: this.evals, deployments: this.deployments };
  }

  /** The store's allocs with the client's view of each (status, task states). */
  private view(): Allocation[] {
    const client = this.env.client();
    return [...this.allocs.values()].map(({ alloc: a }) => {
      const r = client.runner(a.id);
      if (!r) return a;
      const c = r.alloc();
      return { ...a, clientStatus: c.clientStatus, taskStates: c.taskStates };
    });
  }

  private newId(kind: 'a' | 'e'): string {
    const n = ++this.ids;
    return kind === 'a' ? jobAllocUuid(n) : `0000000e-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
  }

  private toJob(op: Extract<JobOp, { op: 'jobRegister' }>, version: number): Job {
    const { spec } = op;
    const per = Math.max(1, Math.floor(op.cpu / spec.tasks.length));
    const mem = Math.max(16, Math.floor(op.memoryMB / spec.tasks.length));
    return {
      id: `sjob${op.job}`,
      type: spec.type,
      priority: op.priority,
      version,
      taskGroups: [
        {
          name: 'g',
          count: op.count,
          restartPolicy: spec.restart,
          ephemeralDisk: { sizeMB: 300, ...(spec.sticky ? { sticky: true } : {}) },
          ...(spec.shutdownDelayMs ? { shutdownDelayMs: spec.shutdownDelayMs } : {}),
          ...(spec.maxRunDurationMs ? { maxRunDurationMs: spec.maxRunDurationMs } : {}),
          ...(op.rescheduleDelayMs !== undefined
            ? {
                reschedulePolicy: {
                  attempts: 2,
                  intervalMs: 60_000,
                  delayMs: op.rescheduleDelayMs,
                  delayFunction: 'constant' as const,
                  maxDelayMs: 0,
                  unlimited: false,
                },
              }
            : {}),
          ...(op.maxParallel
            ? {
                update: {
                  maxParallel: op.maxParallel,
                  healthCheck: 'task_states' as const,
                  minHealthyTimeMs: 0,
                  healthyDeadlineMs: 60_000,
                  progressDeadlineMs: 120_000,
                  autoRevert: false,
                  autoPromote: false,
                  canary: 0,
                  staggerMs: 0,
                },
              }
            : {}),
          ...(op.ports
            ? { networks: [{ mode: 'host' as const, reservedPorts: [], dynamicPorts: Array.from({ length: op.ports }, (_, i) => ({ label: `p${i}` })) }] }
            : {}),
          tasks: spec.tasks.map((t) => ({
            name: t.name,
            driver: SIM_DRIVER,
            config: {},
            killTimeoutMs: t.killTimeoutMs,
            killSignal: t.killSignal,
            resources: { cpu: per, memoryMB: mem },
            ...(t.shutdownDelayMs ? { shutdownDelayMs: t.shutdownDelayMs } : {}),
            ...(t.hook ? { lifecycle: { hook: t.hook, sidecar: !!t.sidecar } } : {}),
          })),
        },
      ],
    };
  }
}

function alias(id: string): string {
  const m = /^0000000c-0000-4000-8000-([0-9a-f]{12})$/.exec(id);
  return m ? `j${parseInt(m[1]!, 16)}` : id;
}
