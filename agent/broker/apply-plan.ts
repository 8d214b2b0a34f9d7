/**
 * Plan application, pure: what a scheduler plan writes and which client calls follow, in order.
 * The evaluation broker (broker.ts) commits these rows in one transaction and makes these calls;
 * the simulator (sim/jobs.ts) applies the same result to its own maps and client, so its seeds
 * run the broker's plan application, not a copy of it.
 *
 * ```
 * stops, evictions ──► server fields, allocModifyIndex; an eviction's preemptedBy
 * deployment       ──► cancelled older ones, the job's created or advanced (planDeployment)
 * in place, attrs  ──► server fields; an in-place one joins its group's deployment
 * placements       ──► new rows with the deployment id; the predecessor's nextAllocation
 * new evals        ──► jobModifyIndex; a blocked one refreshes the job's blocked eval if it has one
 * the eval         ──► done, with its snapshot index and plan summary
 * client calls     ──► update (stops, evictions), update (in place), add (placements)
 * ```
 * @module
 */
import type { Allocation, Job } from '../../index.ts';
import { blockedEvalOf, supersededBlockedEvals, type Plan } from '../scheduler/index.ts';
import { planDeployment, type DeploymentJobRow } from '../deploy/deployments.ts';
import type { Deployment, Evaluation, ServerAlloc } from '../state/types.ts';

/** What plan application reads (the agent's state satisfies it; the simulator builds its own). */
export interface PlanView {
  allocs: ReadonlyMap<string, ServerAlloc>;
  jobs: ReadonlyMap<string, DeploymentJobRow>;
  evals: ReadonlyMap<string, Evaluation>;
  deployments: ReadonlyMap<string, Deployment>;
}

/** One write of the commit, in order; `eventType` is the event it raises (none when unset). */
export type PlanWrite =
  | { table: 'alloc'; row: ServerAlloc; eventType?: 'AllocationUpdated' | 'PlanResult' }
  | { table: 'eval'; row: Evaluation }
  | { table: 'deployment'; row: Deployment };

/** A call to the client after the commit. */
export interface ClientCall {
  kind: 'update' | 'add';
  alloc: Allocation;
}

/** What applying a plan comes to. */
export interface AppliedPlan {
  /** The commit's writes, in the order they are made. */
  writes: PlanWrite[];
  /** The client calls, in order: stops and evictions, then in-place updates, then placements. */
  clientCalls: ClientCall[];
  /** Pending evaluations the plan made, to enqueue after the commit. */
  followUps: string[];
  /** Each evicted alloc's preemptor. */
  preemptedBy: ReadonlyMap<string, string>;
}

/** The commit's index and clock, and the index the scheduler read. */
export interface ApplyOptions {
  index: number;
  snapshotIndex: number;
  now: number;
  /** Names a new deployment. */
  newId: () => string;
}

/** What the scheduler decides about an alloc (never the client's report). */
export function serverFields(a: Allocation): Partial<Allocation> {
  const out: Partial<Allocation> = { desiredStatus: a.desiredStatus, job: a.job };
  for (const k of ['desiredDescription', 'jobVersion', 'evalId', 'followupEvalId', 'modifyTime', 'allocatedResources', 'deploymentId'] as const)
    if (a[k] !== undefined) (out as Record<string, unknown>)[k] = a[k];
  return out;
}

/** Pure: the rows `plan` (made for `ev` of `job`) writes over `view`, the client calls and the follow-ups. */
export function applyPlan(view: PlanView, plan: Plan, ev: Evaluation, job: Job | undefined, opts: ApplyOptions): AppliedPlan {
  const { index, now } = opts;
  const writes: PlanWrite[] = [];
  const stops: Allocation[] = [];
  const updates: Allocation[] = [];
  const adds: Allocation[] = [];
  const followUps: string[] = [];
  // What this commit wrote, by id: a replacement's nextAllocation goes onto its predecessor's stop.
  const written = new Map<string, ServerAlloc>();
  const put = (row: ServerAlloc, eventType: 'AllocationUpdated' | 'PlanResult') => {
    written.set(row.alloc.id, row);
    writes.push({ table: 'alloc', row, eventType });
  };
  const byPreempted = new Map<string, string>();
  for (const p of plan.place) for (const v of p.preemptedAllocations ?? []) byPreempted.set(v, p.id);
  for (const a of [...plan.stop, ...plan.preempt]) {
    const cur = view.allocs.get(a.id)!;
    const alloc = { ...cur.alloc, ...serverFields(a), allocModifyIndex: index };
    const by = byPreempted.get(a.id);
    put({ ...cur, alloc, ...(by ? { preemptedBy: by } : {}), modifyIndex: index }, 'AllocationUpdated');
    stops.push(alloc);
  }
  const { rows, deploymentOf } = planDeployment(view, plan, job, { index, now, newId: opts.newId });
  for (const row of rows) writes.push({ table: 'deployment', row });
  for (const a of [...plan.inPlace, ...plan.attributeUpdates]) {
    const cur = view.allocs.get(a.id)!;
    const inPlace = plan.inPlace.includes(a);
    // An alloc updated in place joins its group's deployment.
    const deploymentId = inPlace ? deploymentOf.get(a.taskGroup) : undefined;
    const alloc = { ...cur.alloc, ...serverFields(a), ...(deploymentId ? { deploymentId } : {}), allocModifyIndex: index };
    put({ ...cur, alloc, modifyIndex: index }, 'AllocationUpdated');
    if (inPlace) updates.push(alloc);
  }
  for (const a of plan.place) {
    const deploymentId = deploymentOf.get(a.taskGroup);
    const alloc = { ...a, ...(deploymentId ? { deploymentId } : {}), allocModifyIndex: index };
    put({ alloc, ...(plan.metrics[a.id] ? { metrics: plan.metrics[a.id] } : {}), createIndex: index, modifyIndex: index }, 'PlanResult');
    if (a.previousAllocation) {
      const prev = written.get(a.previousAllocation) ?? view.allocs.get(a.previousAllocation);
      if (prev) writes.push({ table: 'alloc', row: { ...prev, nextAllocation: a.id, modifyIndex: index } });
    }
    adds.push(alloc);
  }
  let blockedEval = plan.eval.blockedEval;
  for (const e of plan.evals) {
    const jobModifyIndex = view.jobs.get(e.jobId)?.jobModifyIndex;
    const made: Evaluation = { ...e, ...(jobModifyIndex !== undefined ? { jobModifyIndex } : {}), createIndex: index, modifyIndex: index };
    if (made.status === 'blocked') {
      // One blocked eval per job (Nomad's blocked-evals tracker): a job already blocked keeps its
      // eval, refreshed with what this pass could not place, rather than a new one per pass
      // cancelling the last (one per client update while a job waits for capacity).
      const kept = blockedEvalOf(view.evals.values(), made.jobId, made.namespace ?? 'default');
      const row: Evaluation = kept
        ? { ...kept, ...pick(made), modifyIndex: index, modifyTime: now, ...(jobModifyIndex !== undefined ? { jobModifyIndex } : {}) }
        : made;
      writes.push({ table: 'eval', row });
      if (made.id === blockedEval) blockedEval = row.id;
      for (const c of supersededBlockedEvals([...view.evals.values()], row, now))
        writes.push({ table: 'eval', row: { ...(c as Evaluation), modifyIndex: index } });
      continue;
    }
    writes.push({ table: 'eval', row: made });
    if (made.status === 'pending') followUps.push(made.id);
  }
  const done: Evaluation = {
    ...ev,
    ...plan.eval,
    ...(blockedEval !== undefined ? { blockedEval } : {}),
    createIndex: ev.createIndex,
    modifyIndex: index,
    snapshotIndex: opts.snapshotIndex,
    plan: {
      placed: plan.place.map((a) => a.id),
      stopped: plan.stop.map((a) => a.id),
      preempted: plan.preempt.map((a) => ({ allocId: a.id, by: byPreempted.get(a.id) ?? '' })),
    },
  };
  writes.push({ table: 'eval', row: done });
  const clientCalls: ClientCall[] = [
    ...stops.map((alloc) => ({ kind: 'update' as const, alloc })),
    ...updates.map((alloc) => ({ kind: 'update' as const, alloc })),
    ...adds.map((alloc) => ({ kind: 'add' as const, alloc })),
  ];
  return { writes, clientCalls, followUps, preemptedBy: byPreempted };
}

/** What a pass learns about what it could not place, refreshed on a job's kept blocked eval. */
function pick(made: Evaluation): Partial<Evaluation> {
  return {
    ...(made.failedTgAllocs ? { failedTgAllocs: made.failedTgAllocs } : {}),
    ...(made.queuedAllocations ? { queuedAllocations: made.queuedAllocations } : {}),
    ...(made.jobVersion !== undefined ? { jobVersion: made.jobVersion } : {}),
  };
}
