/**
 * `schedule`: one evaluation in, one plan out. Pure: no I/O, no clock, no randomness but what the
 * input hands in. Follows Nomad's generic scheduler for one node: reconcile every group, stop
 * first, update in place, then place (new and rescheduled allocs before destructive
 * replacements), preempting where the scheduler type allows, and end with the evals to store.
 * @module
 */
import { BerthError, isTerminal, type Allocation, type Job } from '../../index.ts';
import { DESC_BLOCKED_EVAL, DESC_RESCHEDULE_FOLLOWUP, newEvaluation, RESCHEDULE_BATCH_WINDOW_MS } from './evaluations.ts';
import { allocIndexOf } from './names.ts';
import { feasible } from './feasible.ts';
import { evaluatedMetric, exhaustedMetric, filteredMetric } from './metrics.ts';
import { fit } from './place.ts';
import { DEFAULT_JOB_PRIORITY } from './preemption.ts';
import { reconcileGroup, stopAll, type GroupResult, type MissingPlacements, type PlaceRequest } from './reconcile.ts';
import { rescheduleTrackerFor } from './reschedule.ts';
import { comparableOf } from './resources.ts';
import { scorePlacement } from './score.ts';
import type { AllocatedResources } from '../../index.ts';
import type { AllocMetric, Evaluation, Plan, ScheduleInput, SchedulerConfiguration } from './types.ts';

/** The scheduler was handed input it cannot work with; `issues` lists each problem. */
export class SchedulerInputError extends BerthError {
  readonly issues: string[];
  constructor(issues: string[]) {
    super(`invalid scheduler input: ${issues.join('; ')}`);
    this.issues = issues;
  }
}

/** Nomad's default scheduler configuration: preemption for system jobs only. */
export function defaultSchedulerConfiguration(): SchedulerConfiguration {
  return {
    preemptionConfig: { systemSchedulerEnabled: true, sysbatchSchedulerEnabled: false, batchSchedulerEnabled: false, serviceSchedulerEnabled: false },
    memoryOversubscriptionEnabled: false,
  };
}

/** Whether the configuration lets jobs of this type preempt. */
export function preemptionEnabled(config: SchedulerConfiguration, type: Job['type']): boolean {
  const p = config.preemptionConfig;
  switch (type) {
    case 'service':
      return p.serviceSchedulerEnabled;
    case 'batch':
      return p.batchSchedulerEnabled;
    case 'sysbatch':
      return p.sysbatchSchedulerEnabled;
    case 'system':
      return p.systemSchedulerEnabled;
  }
}

/**
 * Process one evaluation: decide which allocs of the eval's job to place, stop, evict, update in
 * place or leave queued on this node.
 *
 * @example
 * ```ts
 * let n = 0;
 * const plan = schedule({
 *   node: { id: 'node-1', resources: { cpuMHz: 3000, memoryMB: 3072, diskMB: 10_000, cores: 2 } },
 *   jobs: [hi, lo],
 *   allocs: store.allocs(),   // every alloc on the node, of every job
 *   config: { preemptionConfig: { ...defaultSchedulerConfiguration().preemptionConfig, serviceSchedulerEnabled: true } },
 *   eval: newEvaluation({ id: 'e1', job: hi, triggeredBy: 'job-register', now: Date.now() }),
 *   now: Date.now(),
 *   newId: () => randomUUID(),
 * });
 * plan.place;    // hi's allocs, each with preemptedAllocations
 * plan.preempt;  // lo's victims: desiredStatus 'evict', "Preempted by alloc ID <id>"
 * plan.evals;    // a 'preemption' eval for lo (which then finds no room and blocks)
 * ```
 * @throws {SchedulerInputError} when the node's numbers, the eval or the id generator are unusable.
 */
export function schedule(input: ScheduleInput): Plan {
  validate(input);
  const { node, eval: ev, now } = input;
  const config = input.config ?? defaultSchedulerConfiguration();
  const namespace = ev.namespace ?? 'default';
  const index = input.index ?? Math.max(0, ...input.allocs.map((a) => a.allocModifyIndex)) + 1;
  const job = input.jobs.find((j) => j.id === ev.jobId && (j.namespace ?? 'default') === namespace);
  const jobAllocs = input.allocs.filter((a) => a.jobId === ev.jobId && (a.namespace ?? 'default') === namespace).sort(byCreation);

  const plan = emptyPlan(ev);
  const stamp = (a: Allocation): Allocation => ({ ...a, allocModifyIndex: index, modifyTime: now });

  // Reconcile every group (and stop what belongs to groups the job no longer has).
  const results = new Map<string, GroupResult>();
  const groupNames = [...new Set([...(job && !job.stop ? job.taskGroups.map((g) => g.name) : []), ...jobAllocs.map((a) => a.taskGroup)])];
  for (const name of groupNames) {
    const group = job && !job.stop ? job.taskGroups.find((g) => g.name === name) : undefined;
    const allocs = jobAllocs.filter((a) => a.taskGroup === name);
    const nodeEligible = !!job && nodeInDatacenters(node.datacenter ?? 'dc1', job.datacenters);
    results.set(
      name,
      job && group
        ? reconcileGroup({
            job,
            group,
            allocs,
            all: jobAllocs,
            evalId: ev.id,
            now,
            nodeEligible,
            held: input.heldRollouts?.includes(`${job.id}@${job.version ?? 0}`) === true,
            canaries: input.canaries?.[`${job.id}@${job.version ?? 0}`]?.[name],
          })
        : stopAll(allocs),
    );
  }

  // Stops first: they free room for what follows.
  for (const [name, r] of results) {
    plan.desiredTgUpdates[name] = r.desired;
    if (r.deployment) plan.deployment[name] = r.deployment;
    for (const { alloc, description } of r.stop) plan.stop.push(stamp({ ...alloc, desiredStatus: 'stop', desiredDescription: description }));
  }
  if (!job || job.stop) {
    plan.eval = finishEval(ev, plan, undefined, now);
    return plan;
  }

  // In-place updates: the new job version, same resources and ports.
  for (const r of results.values()) {
    for (const a of r.inPlace) plan.inPlace.push(stamp({ ...a, job, jobVersion: job.version, evalId: ev.id }));
  }

  // Delayed reschedules: follow-up evals, batched by Nomad's window.
  const followups = rescheduleFollowups(input, job, results, plan, stamp);

  // Placements.
  const evict = preemptionEnabled(config, job.type);
  const priority = job.priority ?? DEFAULT_JOB_PRIORITY;
  // Each group's reschedules, its missing allocs (named as they are placed), then its migrations.
  const requests: Array<PlaceRequest | MissingPlacements> = [];
  for (const r of results.values()) {
    requests.push(...r.place.slice(0, r.missingAt));
    if (r.missing && r.missing.count > 0) requests.push(r.missing);
    requests.push(...r.place.slice(r.missingAt));
  }
  for (const r of results.values()) requests.push(...r.destructive);
  for (const r of results.values()) requests.push(...r.canaries);
  const failed = new Map<string, AllocMetric>();
  const live = input.allocs.filter((a) => !isTerminal(a)).sort(byCreation);
  const inDatacenters = nodeInDatacenters(node.datacenter ?? 'dc1', job.datacenters);
  /** One placement; false when it could not be placed (the group now waits). */
  const placeOne = (req: PlaceRequest): boolean => {
    const group = req.group.name;
    plan.queued[group] ??= 0;
    const metric = failed.get(group);
    if (metric) {
      metric.coalescedFailures++;
      plan.queued[group]++;
      return false;
    }
    if (!inDatacenters) {
      // Nomad finds no ready node in the job's datacenters: nothing is evaluated.
      failed.set(group, { nodesEvaluated: 0, nodesFiltered: 0, nodesAvailable: {}, nodesExhausted: 0, dimensionExhausted: {}, coalescedFailures: 0 });
      plan.queued[group]++;
      return false;
    }
    const started = input.elapsed?.();
    const onNode = proposed(live, plan, req.stopPrevious ? req.previous : undefined);
    // Nomad's feasibility checks (constraints, drivers, distinct_*) before any resource is counted.
    const infeasible = feasible({ node, job, group: req.group, proposed: onNode });
    if (infeasible) {
      failed.set(group, filteredMetric(node, infeasible));
      plan.queued[group]++;
      return false;
    }
    const result = fit({
      node,
      group: req.group,
      jobId: job.id,
      namespace,
      jobPriority: priority,
      proposed: onNode,
      preemptedSoFar: plan.preempt,
      evict,
      memoryOversubscription: !!config.memoryOversubscriptionEnabled,
      random: input.random,
    });
    if (!result.ok) {
      failed.set(group, exhaustedMetric(node, result.dimension, req.group));
      plan.queued[group]++;
      return false;
    }
    const id = input.newId();
    const alloc: Allocation = {
      id,
      namespace,
      nodeId: node.id,
      jobId: job.id,
      job,
      taskGroup: group,
      desiredStatus: 'run',
      clientStatus: 'pending',
      allocModifyIndex: index,
      createTime: now,
      modifyTime: now,
      name: req.name,
      evalId: ev.id,
      allocatedResources: result.resources,
    };
    if (job.version !== undefined) alloc.jobVersion = job.version;
    if (req.previous) alloc.previousAllocation = req.previous.id;
    if (req.canary) alloc.deploymentStatus = { canary: true };
    if (req.reschedule && req.previous) alloc.rescheduleTracker = rescheduleTrackerFor(req.previous, now);
    if (req.previous && req.stopPrevious) {
      plan.stop.push(stamp({ ...req.previous, desiredStatus: 'stop', desiredDescription: req.stopPrevious }));
    }
    if (result.victims.length > 0) {
      alloc.preemptedAllocations = result.victims.map((v) => v.id);
      for (const v of result.victims) {
        plan.preempt.push(stamp({ ...v, desiredStatus: 'evict', desiredDescription: `Preempted by alloc ID ${id}` }));
      }
      plan.desiredTgUpdates[group].preemptions += result.victims.length;
    }
    plan.place.push(alloc);
    plan.metrics[id] = placedMetric(input, job, req, onNode, result.resources, started);
    return true;
  };
  for (const req of requests) {
    if (!('nextName' in req)) {
      placeOne(req);
      continue;
    }
    // Missing allocs: once one does not fit, the rest wait too, counted without naming them.
    let left = req.count;
    while (left > 0) {
      left--;
      if (!placeOne({ name: req.nextName(), group: req.group })) break;
    }
    if (left > 0) {
      failed.get(req.group.name)!.coalescedFailures += left;
      plan.queued[req.group.name]! += left;
    }
  }
  for (const [group, metric] of failed) plan.failedTgAllocs[group] = metric;
  for (const name of groupNames) plan.queued[name] ??= 0;

  // Evals for the jobs whose allocs were evicted (Nomad's plan applier makes them).
  const preemptedJobs = new Map<string, Allocation['job']>();
  for (const v of plan.preempt) preemptedJobs.set(JSON.stringify([v.namespace ?? 'default', v.jobId]), v.job);
  for (const victimJob of preemptedJobs.values()) {
    plan.evals.push(newEvaluation({ id: input.newId(), job: victimJob, triggeredBy: 'preemption', now }));
  }

  // What could not be placed waits in a blocked eval.
  let blocked: Evaluation | undefined;
  const waiting = followups.length > 0 && ev.waitUntil !== undefined && now <= ev.waitUntil;
  if (failed.size > 0 && ev.status !== 'blocked' && !waiting) {
    blocked = {
      ...newEvaluation({ id: input.newId(), job, triggeredBy: 'queued-allocs', now, statusDescription: DESC_BLOCKED_EVAL }),
      status: 'blocked',
      previousEval: ev.id,
      failedTgAllocs: plan.failedTgAllocs,
      queuedAllocations: { ...plan.queued },
    };
    plan.evals.push(blocked);
  }
  plan.evals.push(...followups);
  plan.eval = finishEval(ev, plan, blocked, now, followups);
  return plan;
}

/** A placed alloc's `Metrics`: the node evaluated and scored, and the time the placement took. */
function placedMetric(
  input: ScheduleInput,
  job: Job,
  req: PlaceRequest,
  onNode: Allocation[],
  resources: AllocatedResources,
  started: number | undefined,
): AllocMetric {
  const m = evaluatedMetric(input.node);
  const { scores, normScore } = scorePlacement({
    node: input.node,
    job,
    group: req.group,
    proposed: onNode,
    ask: comparableOf(resources),
    reschedule: !!req.reschedule,
  });
  m.scoreMetaData = [{ nodeId: input.node.id, scores, normScore }];
  m.allocationTimeMs = started === undefined ? 0 : Math.max(0, input.elapsed!() - started);
  return m;
}

/**
 * Every alloc the node would run with the plan so far applied (Nomad's `ProposedAllocs`): `live`
 * (the allocs handed in that are not terminal, in creation order) less the plan's stops and
 * evictions, plus its placements.
 */
function proposed(live: Allocation[], plan: Plan, alsoStopping?: Allocation): Allocation[] {
  const gone = new Set([...plan.stop, ...plan.preempt].map((a) => a.id));
  if (alsoStopping) gone.add(alsoStopping.id);
  return [...live.filter((a) => !gone.has(a.id)), ...plan.place];
}

/** Follow-up evals for failed allocs that reschedule later; sets their `followupEvalId`. */
function rescheduleFollowups(
  input: ScheduleInput,
  job: Job,
  results: Map<string, GroupResult>,
  plan: Plan,
  stamp: (a: Allocation) => Allocation,
): Evaluation[] {
  const later = [...results.values()].flatMap((r) => r.rescheduleLater).sort((a, b) => a.time - b.time);
  const evals: Evaluation[] = [];
  let current: Evaluation | undefined;
  for (const { alloc, time } of later) {
    if (!current || time - (current.waitUntil ?? 0) >= RESCHEDULE_BATCH_WINDOW_MS) {
      // Nomad marks the first follow-up `alloc-reschedule` with a description, later ones `alloc-failure`.
      current = newEvaluation({
        id: input.newId(),
        job,
        triggeredBy: evals.length === 0 ? 'alloc-reschedule' : 'alloc-failure',
        now: input.now,
        waitUntil: time,
        statusDescription: evals.length === 0 ? DESC_RESCHEDULE_FOLLOWUP : undefined,
      });
      current.previousEval = input.eval.id;
      evals.push(current);
    }
    plan.attributeUpdates.push(stamp({ ...alloc, followupEvalId: current.id }));
  }
  return evals;
}

/** A plan for `ev` that does nothing yet: where the scheduler starts, and a base for specs' plans. */
export function emptyPlan(ev: Evaluation): Plan {
  return {
    eval: ev,
    place: [],
    stop: [],
    preempt: [],
    inPlace: [],
    attributeUpdates: [],
    evals: [],
    queued: {},
    failedTgAllocs: {},
    desiredTgUpdates: {},
    deployment: {},
    metrics: {},
  };
}

/** The processed eval: complete (or still blocked), with what it left queued and why. */
function finishEval(ev: Evaluation, plan: Plan, blocked: Evaluation | undefined, now: number, followups: Evaluation[] = []): Evaluation {
  const stillBlocked = ev.status === 'blocked' && Object.keys(plan.failedTgAllocs).length > 0;
  const out: Evaluation = { ...ev, status: stillBlocked ? 'blocked' : 'complete', modifyTime: now, queuedAllocations: { ...plan.queued } };
  if (Object.keys(plan.failedTgAllocs).length > 0) out.failedTgAllocs = plan.failedTgAllocs;
  else delete out.failedTgAllocs;
  if (blocked) out.blockedEval = blocked.id;
  if (followups.length > 0) out.nextEval = followups[0].id;
  return out;
}

/** Creation time, then name index, then id: a fixed order for allocs, whatever order they came in. */
function byCreation(a: Allocation, b: Allocation): number {
  return (a.createTime ?? 0) - (b.createTime ?? 0) || indexOf(a) - indexOf(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

const indexCache = new WeakMap<Allocation, number>();
function indexOf(a: Allocation): number {
  let i = indexCache.get(a);
  if (i === undefined) indexCache.set(a, (i = allocIndexOf(a.name) ?? 0));
  return i;
}

function validate(input: ScheduleInput): void {
  const issues: string[] = [];
  const r = input.node?.resources;
  if (!input.node?.id) issues.push('node.id: required');
  for (const key of ['cpuMHz', 'memoryMB', 'diskMB'] as const) {
    if (!r || !Number.isFinite(r[key]) || r[key] < 0) issues.push(`node.resources.${key}: a number >= 0 is required`);
  }
  if (r?.cores !== undefined && (!Number.isInteger(r.cores) || r.cores < 1)) issues.push('node.resources.cores: a whole number >= 1 is required');
  const min = input.node?.minDynamicPort;
  const max = input.node?.maxDynamicPort;
  if (min !== undefined && max !== undefined && min > max) issues.push(`node.minDynamicPort (${min}) is above node.maxDynamicPort (${max})`);
  if (!input.eval?.id || !input.eval.jobId) issues.push('eval: an id and a jobId are required');
  if (typeof input.newId !== 'function') issues.push('newId: a function is required');
  if (!Number.isFinite(input.now)) issues.push('now: a time in ms is required');
  // Without these the scheduler would fail later with a TypeError, not this error.
  if (!Array.isArray(input.jobs)) issues.push('jobs: a list is required');
  if (!Array.isArray(input.allocs)) issues.push('allocs: a list is required');
  for (const job of input.jobs ?? []) {
    for (const g of job.taskGroups) {
      if (g.count !== undefined && (!Number.isInteger(g.count) || g.count < 0)) issues.push(`job ${job.id} group ${g.name}: count must be a whole number >= 0`);
    }
  }
  if (issues.length > 0) throw new SchedulerInputError(issues);
}

/**
 * Whether the node's datacenter is one of the job's (Nomad's `datacenters`, with `*` wildcards; a
 * job without any runs everywhere, as Nomad's default `["*"]`).
 */
export function nodeInDatacenters(datacenter: string, datacenters: string[] | undefined): boolean {
  if (!datacenters || datacenters.length === 0) return true;
  return datacenters.some((dc) => new RegExp(`^${dc.split('*').map(escapeRegExp).join('.*')}$`).test(datacenter));
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
