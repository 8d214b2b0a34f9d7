/**
 * The evaluation broker: evaluations are processed one at a time, in the order they were
 * created (a delayed one, a reschedule follow-up, once its `waitUntil` has come). Each runs
 * berth's one-node scheduler (`agent/scheduler`) over the current state, commits the plan (new
 * allocs, stops, evictions, in-place updates, the evaluation's outcome, the evaluations it made)
 * in one durable transaction, and only then hands the allocations to the client: stops and
 * evictions first (so victims start stopping), then placements (whose runners wait for those
 * victims).
 *
 * A kill -9 between the commit and the client calls is repaired at the next start by
 * {@link reconcileClient}: the server's view is the intent, the client's store the fact.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { createActor, fromPromise, toPromise } from 'xstate';
import { errorText, isClientTerminalStatus, type Allocation, type Client, type Job } from '../../index.ts';
import { apiJobToJob } from '../jobs/jobspec.ts';
import { isParentJob } from '../jobs/dispatch.ts';
import { blockedEvalsToRetry, isReady, newEvaluation, schedule, type EvalTrigger, type Plan, type SchedulerNode } from '../scheduler/index.ts';
import type { AgentState, Txn } from '../state/store.ts';
import type { Evaluation, JobRecord } from '../state/types.ts';
import { putDeployments } from '../deploy/deployments.ts';
import { applyPlan, serverFields, type AppliedPlan, type PlanWrite } from './apply-plan.ts';
import { canaryStates } from '../deploy/canaries.ts';
import { evalMachine } from './eval-machine.ts';
import { refusedAlloc } from './refused.ts';

/** What the broker needs from the agent. */
export interface BrokerDeps {
  state: AgentState;
  client: Client;
  node: () => SchedulerNode;
  /** Told about each finished evaluation and anything that went wrong (the agent's log). */
  log: (line: string) => void;
  /** Called after each plan is applied (the deployment watcher looks at its batches). */
  onPlan?: (plan: Plan) => void;
  /** Told the client's report for an alloc it refused (failed, with the reason), to record it. */
  onRefused?: (report: Allocation) => void;
  /** A number in [0, 1) for each dynamic port pick (Nomad picks at random). Default: the lowest free port. */
  random?: () => number;
}

const jobCache = new WeakMap<JobRecord, Job>();

/** The berth job of one stored job version (parsed once). */
export function jobOf(rec: JobRecord): Job {
  let j = jobCache.get(rec);
  if (!j) {
    const decoded = apiJobToJob(rec.apiJob);
    // A parameterized or periodic parent is never placed (its children are): the scheduler sees it stopped.
    j = { ...decoded, version: rec.version, ...(rec.stop || isParentJob(decoded) ? { stop: true } : {}) };
    jobCache.set(rec, j);
  }
  return j;
}

/** Creates a pending evaluation for `jobId` inside `txn` and returns it (enqueue it after the commit). */
export function newEval(
  txn: Txn,
  state: AgentState,
  jobId: string,
  triggeredBy: EvalTrigger,
  extra: Partial<Evaluation> = {},
  /** The job as this commit leaves it (a register's new version: the state still holds the old one). */
  rec: JobRecord | undefined = state.jobs.get(jobId),
): Evaluation {
  const job = rec ? jobOf(rec) : { id: jobId, type: 'service' as const };
  const ev: Evaluation = {
    ...newEvaluation({ id: randomUUID(), job, triggeredBy, now: Date.now() }),
    ...(rec ? { jobModifyIndex: rec.jobModifyIndex } : {}),
    createIndex: txn.index,
    modifyIndex: txn.index,
    ...extra,
  };
  txn.putEval(ev);
  txn.event({ topic: 'Evaluation', type: 'EvaluationUpdated', key: ev.id, object: ev });
  return ev;
}

/** Every job the scheduler should know (their current versions). */
function allJobs(state: AgentState): Job[] {
  return [...state.jobs.values()].map(jobOf);
}

/** The scheduling pass for `ev` over the current state (no change made). */
export function planFor(state: AgentState, node: SchedulerNode, ev: Evaluation, jobs: Job[] = allJobs(state), random?: () => number): Plan {
  const p = state.schedulerConfig!.preemption;
  return schedule({
    node,
    jobs,
    allocs: [...state.allocs.values()].map((s) => s.alloc),
    config: {
      preemptionConfig: { ...p },
    },
    eval: ev,
    now: Date.now(),
    newId: randomUUID,
    ...(random ? { random } : {}),
    index: state.waiters.index + 1,
    heldRollouts: [...state.deployments.values()].filter((d) => d.status === 'paused' || d.status === 'failed').map((d) => `${d.jobId}@${d.jobVersion}`),
    canaries: canaryStates(state),
    elapsed: () => performance.now(),
  });
}

/** The evaluation broker. */
export class EvalBroker {
  readonly #deps: BrokerDeps;
  readonly #queue: string[] = [];
  readonly #delayed = new Map<string, NodeJS.Timeout>();
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(deps: BrokerDeps) {
    this.#deps = deps;
  }

  /** Queues an evaluation already committed as pending (a delayed one at its `waitUntil`). */
  enqueue(evalId: string): void {
    if (this.#stopped || this.#delayed.has(evalId)) return;
    const ev = this.#deps.state.evals.get(evalId);
    if (ev?.waitUntil !== undefined && !isReady(ev, Date.now())) {
      const t = setTimeout(() => {
        this.#delayed.delete(evalId);
        this.enqueue(evalId);
      }, ev.waitUntil - Date.now());
      this.#delayed.set(evalId, t);
      return;
    }
    this.#queue.push(evalId);
    this.#running ??= this.#drain().finally(() => (this.#running = undefined));
  }

  /** Resolves once the queue is empty. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Stops taking evaluations; the one in progress finishes; delayed ones stay pending in the store. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#queue.length = 0;
    for (const t of this.#delayed.values()) clearTimeout(t);
    this.#delayed.clear();
    await this.idle();
  }

  /** Blocked evaluations get another pass (resources were freed). */
  unblock(): void {
    const { state } = this.#deps;
    const blocked = blockedEvalsToRetry([...state.evals.values()]) as Evaluation[];
    for (const b of blocked) if (!this.#queue.includes(b.id)) this.#queue.push(b.id);
    if (blocked.length) this.#running ??= this.#drain().finally(() => (this.#running = undefined));
  }

  async #drain(): Promise<void> {
    while (this.#queue.length && !this.#stopped) {
      const id = this.#queue.shift()!;
      // One evaluation per macrotask: HTTP answers and client updates interleave.
      await new Promise((r) => setImmediate(r));
      if (this.#stopped) break;
      await this.#run(id);
    }
  }

  /** Processes one evaluation as an `eval-<id>` actor (eval-machine.ts), shown in the client's viewer. */
  async #run(id: string): Promise<void> {
    const { state, client } = this.#deps;
    const ev = state.evals.get(id);
    const actor = createActor(
      evalMachine.provide({
        actors: {
          schedule: fromPromise(async ({ input }) => this.#process(input.evalId)),
          recordFailure: fromPromise(async ({ input }) => {
            this.#deps.log(`evaluation ${input.evalId.slice(0, 8)} failed: ${input.error}`);
            const cur = state.evals.get(input.evalId);
            if (cur)
              state.commit((txn) => {
                const failed: Evaluation = { ...cur, status: 'failed', statusDescription: input.error ?? '', modifyIndex: txn.index, modifyTime: Date.now() };
                txn.putEval(failed);
                txn.event({ topic: 'Evaluation', type: 'EvaluationUpdated', key: input.evalId, object: failed });
              });
            return '';
          }),
        },
      }),
      { id: `eval-${id}`, input: { evalId: id, jobId: ev?.jobId ?? '', triggeredBy: ev?.triggeredBy ?? '' } },
    );
    const detach = client.attachActor(actor);
    try {
      actor.start();
      await toPromise(actor);
    } finally {
      detach();
    }
  }

  /** Plans `evalId`, commits the plan and hands the client its allocs; returns the outcome line. */
  #process(evalId: string): string {
    const { state, client } = this.#deps;
    const ev = state.evals.get(evalId);
    if (!ev || (ev.status !== 'pending' && ev.status !== 'blocked')) return 'nothing to do';
    // The state the scheduler read (Nomad's SnapshotIndex).
    const snapshotIndex = state.waiters.index;
    const plan = planFor(state, this.#deps.node(), ev, allJobs(state), this.#deps.random);
    const rec = state.jobs.get(ev.jobId);
    let applied: AppliedPlan | undefined;
    state.commit((txn) => {
      applied = applyPlan(state, plan, ev, rec ? jobOf(rec) : undefined, { index: txn.index, snapshotIndex, now: Date.now(), newId: randomUUID });
      commitWrites(txn, applied.writes);
    });
    const { clientCalls, followUps } = applied!;
    for (const { kind, alloc } of clientCalls) {
      if (kind === 'update') this.#client(() => client.updateAlloc(alloc));
      else this.#client(() => client.addAlloc(alloc), alloc);
    }
    for (const f of followUps) this.enqueue(f);
    this.#deps.onPlan?.(plan);
    const parts = [`${plan.place.length} placed`, `${plan.stop.length} stopped`];
    if (plan.preempt.length) parts.push(`${plan.preempt.length} preempted`);
    if (plan.inPlace.length) parts.push(`${plan.inPlace.length} updated in place`);
    if (Object.keys(plan.failedTgAllocs).length) parts.push('blocked');
    this.#deps.log(`evaluation ${evalId.slice(0, 8)} (${ev.triggeredBy}, job ${ev.jobId}): ${parts.join(', ')}`);
    return parts.join(', ');
  }

  /** Calls the client; an alloc it refuses to add fails with the client's reason (nothing else would end it). */
  #client(fn: () => unknown, adding?: Allocation): void {
    try {
      fn();
    } catch (e) {
      this.#deps.log(`client refused an allocation: ${errorText(e)}`);
      if (adding) this.#deps.onRefused?.(refusedAlloc(adding, errorText(e), Date.now()));
    }
  }
}

/** Writes a plan's rows into `txn`, each with the event it raises. */
function commitWrites(txn: Txn, writes: readonly PlanWrite[]): void {
  for (const w of writes) {
    if (w.table === 'alloc') {
      txn.putAlloc(w.row);
      if (w.eventType) txn.event({ topic: 'Allocation', type: w.eventType, key: w.row.alloc.id, object: w.row });
    } else if (w.table === 'eval') {
      txn.putEval(w.row);
      txn.event({ topic: 'Evaluation', type: 'EvaluationUpdated', key: w.row.id, object: w.row });
    } else putDeployments(txn, [w.row]);
  }
}

/**
 * After a restart: every alloc the servers placed that the client never got is added (the agent
 * died between its plan and the client call), and every runner whose alloc the servers stopped
 * meanwhile gets the stop. Runners the client restored are left alone. An alloc the client had
 * started but no longer knows (its state store was repaired or lost, its tasks stopped by the
 * restore's audit) is reported `lost` through `report`, as Nomad's servers mark an alloc whose
 * client cannot account for it, so the scheduler replaces it; it is never started a second time
 * beside what may be left of it.
 */
export function reconcileClient(state: AgentState, client: Client, log: (line: string) => void, report: (a: Allocation) => void = () => {}): void {
  for (const s of state.allocs.values()) {
    const r = client.runner(s.alloc.id);
    try {
      if (!r) {
        if (s.alloc.desiredStatus === 'run' && s.alloc.clientStatus === 'pending') client.addAlloc(s.alloc);
        else if (!isClientTerminalStatus(s.alloc.clientStatus)) {
          log(`allocation ${s.alloc.id.slice(0, 8)} is unknown to the client (its state was repaired or lost): reported lost`);
          report({ ...s.alloc, clientStatus: 'lost', clientDescription: 'the client has no state for this allocation (its state store was repaired or lost)' });
        }
      } else if (r.alloc().desiredStatus !== s.alloc.desiredStatus || r.alloc().allocModifyIndex < s.alloc.allocModifyIndex) {
        client.updateAlloc({ ...r.alloc(), ...serverFields(s.alloc), allocModifyIndex: s.alloc.allocModifyIndex });
      }
    } catch (e) {
      log(`cannot reconcile allocation ${s.alloc.id.slice(0, 8)}: ${errorText(e)}`);
    }
  }
}
