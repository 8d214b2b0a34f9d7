/**
 * The evaluation broker: evaluations are processed one at a time, in the order they were
 * created. Each runs the placement over the current state, commits the plan (new allocs, stops,
 * evictions, the evaluation's outcome, a blocked evaluation for what did not fit) in one durable
 * transaction, and only then hands the allocations to the client: stops and evictions first (so
 * victims start stopping), then placements (whose runners wait for those victims).
 *
 * A kill -9 between the commit and the client calls is repaired at the next start by
 * {@link reconcileClient}: the server's view is the intent, the client's store the fact.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Allocation, Client } from '../../index.ts';
import { apiJobToJob } from '../jobs/jobspec.ts';
import type { AgentState, Txn } from '../state/store.ts';
import type { Evaluation, ServerAlloc } from '../state/types.ts';
import { planPlacement, type NodeCapacity } from './placement.ts';

/** What the broker needs from the agent. */
export interface BrokerDeps {
  state: AgentState;
  client: Client;
  capacity: () => NodeCapacity;
  /** Told about each finished evaluation and anything that went wrong (the agent's log). */
  log: (line: string) => void;
}

/** Creates a pending evaluation for `jobId` inside `txn` and returns it (enqueue it after the commit). */
export function newEval(txn: Txn, state: AgentState, jobId: string, triggeredBy: string, extra: Partial<Evaluation> = {}): Evaluation {
  const job = state.jobs.get(jobId);
  const now = Date.now();
  const ev: Evaluation = {
    id: randomUUID(),
    namespace: job?.namespace ?? 'default',
    priority: (job?.apiJob.Priority as number | undefined) ?? 50,
    type: (job?.apiJob.Type as string | undefined) ?? 'service',
    triggeredBy,
    jobId,
    ...(job ? { jobModifyIndex: job.jobModifyIndex } : {}),
    status: 'pending',
    createIndex: txn.index,
    modifyIndex: txn.index,
    createTime: now,
    modifyTime: now,
    ...extra,
  };
  txn.putEval(ev);
  txn.event({ topic: 'Evaluation', type: 'EvaluationUpdated', key: ev.id, object: ev });
  return ev;
}

/** The evaluation broker. */
export class EvalBroker {
  readonly #deps: BrokerDeps;
  readonly #queue: string[] = [];
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(deps: BrokerDeps) {
    this.#deps = deps;
  }

  /** Queues an evaluation already committed as pending. */
  enqueue(evalId: string): void {
    if (this.#stopped) return;
    this.#queue.push(evalId);
    this.#running ??= this.#drain().finally(() => (this.#running = undefined));
  }

  /** Resolves once the queue is empty. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Stops taking evaluations; the one in progress finishes. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#queue.length = 0;
    await this.idle();
  }

  /** Blocked evaluations get another pass (resources were freed). */
  unblock(): void {
    const { state } = this.#deps;
    const blocked = [...state.evals.values()].filter((e) => e.status === 'blocked');
    if (blocked.length === 0) return;
    state.commit((txn) => {
      for (const b of blocked) {
        const ev = { ...b, status: 'pending' as const, modifyIndex: txn.index, modifyTime: Date.now() };
        txn.putEval(ev);
        txn.event({ topic: 'Evaluation', type: 'EvaluationUpdated', key: ev.id, object: ev });
      }
    });
    for (const b of blocked) this.enqueue(b.id);
  }

  async #drain(): Promise<void> {
    while (this.#queue.length && !this.#stopped) {
      const id = this.#queue.shift()!;
      // One evaluation per macrotask: HTTP answers and client updates interleave.
      await new Promise((r) => setImmediate(r));
      try {
        this.#process(id);
      } catch (e) {
        this.#deps.log(`evaluation ${id.slice(0, 8)} failed: ${(e as Error).message}`);
        const { state } = this.#deps;
        const ev = state.evals.get(id);
        if (ev)
          state.commit((txn) => {
            const failed = { ...ev, status: 'failed' as const, statusDescription: (e as Error).message, modifyIndex: txn.index, modifyTime: Date.now() };
            txn.putEval(failed);
            txn.event({ topic: 'Evaluation', type: 'EvaluationUpdated', key: id, object: failed });
          });
      }
    }
  }

  #process(evalId: string): void {
    const { state, client } = this.#deps;
    const ev = state.evals.get(evalId);
    if (!ev || ev.status !== 'pending') return;
    const record = state.jobs.get(ev.jobId);
    const job = record && !record.stop ? apiJobToJob(record.apiJob) : undefined;
    const plan = planPlacement({
      evalId,
      jobId: ev.jobId,
      job,
      jobVersion: record?.version ?? 0,
      node: this.#deps.capacity(),
      allocs: [...state.allocs.values()].map((s) => ({ alloc: s.alloc, jobVersion: s.jobVersion })),
      preemption: state.schedulerConfig!.preemption,
      newId: randomUUID,
      now: Date.now(),
    });
    const toStop: Allocation[] = [];
    const toAdd: Allocation[] = [];
    const toUpdate: Allocation[] = [];
    const followUps: Evaluation[] = [];
    state.commit((txn) => {
      const now = Date.now();
      const put = (s: ServerAlloc, type: string) => {
        txn.putAlloc(s);
        txn.event({ topic: 'Allocation', type, key: s.alloc.id, object: s });
      };
      const preemptedJobs = new Set<string>();
      for (const st of plan.stop) {
        const cur = state.allocs.get(st.allocId)!;
        const alloc = { ...cur.alloc, desiredStatus: st.desiredStatus, allocModifyIndex: txn.index };
        put(
          {
            ...cur,
            alloc,
            desiredDescription: st.description,
            ...(st.preemptedBy ? { preemptedBy: st.preemptedBy } : {}),
            modifyIndex: txn.index,
            modifyTime: now,
          },
          'AllocationUpdated',
        );
        toStop.push(alloc);
        if (st.desiredStatus === 'evict') preemptedJobs.add(cur.alloc.jobId);
      }
      for (const p of plan.inPlace) {
        const cur = state.allocs.get(p.alloc.id)!;
        const alloc = { ...p.alloc, allocModifyIndex: txn.index };
        put({ ...cur, alloc, jobVersion: p.jobVersion, evalId, modifyIndex: txn.index, modifyTime: now }, 'AllocationUpdated');
        toUpdate.push(alloc);
      }
      for (const p of plan.place) {
        const alloc = { ...p.alloc, allocModifyIndex: txn.index };
        put({ alloc, evalId, jobVersion: p.jobVersion, createIndex: txn.index, modifyIndex: txn.index, modifyTime: now }, 'PlanResult');
        if (alloc.previousAllocation) {
          const prev = state.allocs.get(alloc.previousAllocation);
          if (prev) txn.putAlloc({ ...prev, nextAllocation: alloc.id, modifyIndex: txn.index });
        }
        toAdd.push(alloc);
      }
      const failed = Object.entries(plan.failed);
      let blockedEval: Evaluation | undefined;
      // A blocked evaluation that still cannot place everything stays the job's one blocked
      // evaluation rather than leaving a trail of new ones.
      const reblock = failed.length > 0 && ev.triggeredBy === 'queued-allocs';
      if (failed.length && !reblock) {
        blockedEval = newEval(txn, state, ev.jobId, 'queued-allocs', {
          status: 'blocked',
          statusDescription: 'created due to placement conflicts',
          previousEval: evalId,
        });
      }
      const done: Evaluation = {
        ...ev,
        status: reblock ? 'blocked' : 'complete',
        modifyIndex: txn.index,
        modifyTime: now,
        queuedAllocations: Object.fromEntries(job?.taskGroups.map((g) => [g.name, plan.failed[g.name]?.count ?? 0]) ?? []),
        plan: {
          placed: plan.place.map((p) => p.alloc.id),
          stopped: plan.stop.filter((s) => s.desiredStatus === 'stop').map((s) => s.allocId),
          preempted: plan.stop.filter((s) => s.preemptedBy).map((s) => ({ allocId: s.allocId, by: s.preemptedBy! })),
        },
        ...(failed.length
          ? {
              failedTGAllocs: Object.fromEntries(
                failed.map(([g, f]) => [g, { nodesEvaluated: 1, nodesExhausted: 1, dimensionExhausted: { [f.dimension]: 1 }, coalescedFailures: f.count - 1 }]),
              ),
              ...(blockedEval ? { blockedEval: blockedEval.id } : {}),
            }
          : {}),
      };
      txn.putEval(done);
      txn.event({ topic: 'Evaluation', type: 'EvaluationUpdated', key: evalId, object: done });
      for (const j of preemptedJobs) if (state.jobs.has(j)) followUps.push(newEval(txn, state, j, 'preemption', { previousEval: evalId }));
    });
    for (const a of toStop) this.#client(() => client.updateAlloc(a));
    for (const a of toUpdate) this.#client(() => client.updateAlloc(a));
    for (const a of toAdd) this.#client(() => client.addAlloc(a));
    for (const f of followUps) this.enqueue(f.id);
    const sum = [
      `${toAdd.length} placed`,
      `${toStop.length} stopped`,
      plan.stop.some((s) => s.preemptedBy) ? `${plan.stop.filter((s) => s.preemptedBy).length} preempted` : '',
      Object.keys(plan.failed).length ? 'blocked' : '',
    ]
      .filter(Boolean)
      .join(', ');
    this.#deps.log(`evaluation ${evalId.slice(0, 8)} (${ev.triggeredBy}, job ${ev.jobId}): ${sum}`);
  }

  #client(fn: () => unknown): void {
    try {
      fn();
    } catch (e) {
      this.#deps.log(`client refused an allocation: ${(e as Error).message}`);
    }
  }
}

/**
 * After a restart: every alloc the servers placed that the client does not run is added (the
 * agent died between its plan and the client call), and every runner whose alloc the servers
 * stopped meanwhile gets the stop. Runners the client restored are left alone.
 */
export function reconcileClient(state: AgentState, client: Client, log: (line: string) => void): void {
  for (const s of state.allocs.values()) {
    const r = client.runner(s.alloc.id);
    try {
      if (!r) {
        const clientDone = ['complete', 'failed', 'lost'].includes(s.alloc.clientStatus);
        if (s.alloc.desiredStatus === 'run' && !clientDone && s.alloc.clientStatus === 'pending') client.addAlloc(s.alloc);
      } else if (r.alloc().desiredStatus !== s.alloc.desiredStatus || r.alloc().allocModifyIndex < s.alloc.allocModifyIndex) {
        client.updateAlloc({ ...r.alloc(), ...serverFields(s.alloc) });
      }
    } catch (e) {
      log(`cannot reconcile allocation ${s.alloc.id.slice(0, 8)}: ${(e as Error).message}`);
    }
  }
}

const serverFields = (a: Allocation) => ({ desiredStatus: a.desiredStatus, allocModifyIndex: a.allocModifyIndex, job: a.job });
