/**
 * The evaluation broker's passes as the agent shows them (agent/broker/broker.ts), on a real
 * SQLite state and a real in-process client: each pass is one `eval-<id>` actor on the client,
 * with its evaluation, job, trigger and outcome line; the events a pass and a failed pass raise;
 * what a client refusing a stop does; the queue's edges (an unknown id, a stop while a pass
 * waits for its turn, a delayed evaluation queued twice or after a stop).
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyActorRef } from 'xstate';
import { createClient } from '../../../actors/client/client.ts';
import type { Client } from '../../../actors/client/types.ts';
import { EvalBroker, newEval, reconcileClient, type BrokerDeps } from '../../../agent/broker/broker.ts';
import { DEFAULT_PREEMPTION } from '../../../agent/config/config.ts';
import { completeApiJob } from '../../../agent/jobspec/complete.ts';
import { parseJobspec } from '../../../agent/jobspec/index.ts';
import type { SchedulerNode } from '../../../agent/scheduler/index.ts';
import { AgentState, type StateEvent } from '../../../agent/state/store.ts';
import type { ApiJob, JobRecord, ServerAlloc } from '../../../agent/state/types.ts';
import type { Allocation } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

const NODE: SchedulerNode = {
  id: '00000000-0000-4000-8000-000000000001',
  resources: { cpuMHz: 2000, memoryMB: 1024, diskMB: 10_000, cores: 2 },
  portsInUse: [],
  drivers: ['mock_driver'],
};

/** A service job of `count` mock tasks of `memoryMB` each. */
async function apiJob(id: string, count: number, memoryMB = 10): Promise<ApiJob> {
  const job = {
    ID: id,
    Type: 'service',
    TaskGroups: [
      { Name: 'g', Count: count, Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '1h' }, Resources: { CPU: 10, MemoryMB: memoryMB } }] },
    ],
  };
  return (await parseJobspec(JSON.stringify(job), { filename: `job ${id}` })) as unknown as ApiJob;
}

/** The final snapshot of an eval actor, as the viewer shows it. */
const shown = (a: AnyActorRef) => {
  const s = a.getSnapshot() as { value: string; context: Record<string, string> };
  return { id: a.id, state: s.value, context: s.context };
};

describe('agent eval broker: each pass as the client shows it, and the queue’s edges', function () {
  this.timeout(20_000);
  let dir: string;
  let state: AgentState;
  let real: Client;
  let log: string[];
  /** The actors the broker attached to the client, and the ids it detached. */
  let attached: AnyActorRef[];
  let detached: string[];
  /** When set, the client refuses that call with this error (as a client whose driver is gone). */
  let refuse: { addAlloc?: string; updateAlloc?: string };
  let client: Client;
  let broker: EvalBroker;
  const brokers: EvalBroker[] = [];
  const makeBroker = (over: Partial<BrokerDeps> = {}) => {
    const b = new EvalBroker({ state, client, node: () => NODE, log: (l) => log.push(l), ...over });
    brokers.push(b);
    return b;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-eval-actors-'));
    state = new AgentState(join(dir, 'server', 'state.db'));
    state.commit((txn) => txn.putSchedulerConfig({ preemption: { ...DEFAULT_PREEMPTION }, createIndex: txn.index, modifyIndex: txn.index }));
    real = createClient({ dataDir: join(dir, 'client'), nodeId: NODE.id });
    log = [];
    attached = [];
    detached = [];
    refuse = {};
    // The real client, seen across its boundary: which actors the broker attaches and detaches, and
    // the calls a test makes it refuse.
    client = new Proxy(real, {
      get: (t, k) => {
        if (k === 'attachActor')
          return (a: AnyActorRef) => {
            attached.push(a);
            const detach = t.attachActor(a);
            return () => (detached.push(a.id), detach());
          };
        if ((k === 'addAlloc' || k === 'updateAlloc') && refuse[k] !== undefined)
          return () => {
            throw new Error(refuse[k as 'addAlloc' | 'updateAlloc']);
          };
        const v: unknown = Reflect.get(t, k);
        return typeof v === 'function' ? v.bind(t) : v;
      },
    });
    broker = makeBroker();
  });
  afterEach(async () => {
    for (const b of brokers.splice(0)) await b.stop();
    await Promise.allSettled(real.runners().map((r) => r.destroy()));
    await real.shutdown();
    state.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Commits version `version` of `job` with its register evaluation (not queued). */
  function commitJob(job: ApiJob, version: number): string {
    return state.commit((txn) => {
      const rec: JobRecord = {
        id: job.ID,
        namespace: 'default',
        version,
        apiJob: completeApiJob({ ...job, Version: version }),
        createIndex: state.jobs.get(job.ID)?.createIndex ?? txn.index,
        modifyIndex: txn.index,
        jobModifyIndex: txn.index,
        submitTime: 1,
        modifyTime: 1,
        stop: false,
      };
      txn.putJob(rec);
      return newEval(txn, state, job.ID, 'job-register', {}, rec).id;
    });
  }
  /** Commits and processes a version of `job`; returns its evaluation's id. */
  async function register(job: ApiJob, version: number, b = broker): Promise<string> {
    const id = commitJob(job, version);
    b.enqueue(id);
    await b.idle();
    return id;
  }
  /** The events `fn` raises. */
  async function eventsOf(fn: () => Promise<unknown>): Promise<StateEvent[]> {
    const events: StateEvent[] = [];
    const sub = state.events$.subscribe((e) => events.push(e));
    try {
      await fn();
    } finally {
      sub.unsubscribe();
    }
    return events;
  }

  it('a pass is one eval-<id> actor on the client, ending complete with its job, trigger and outcome line, then detached', async () => {
    const id = await register(await apiJob('web', 2), 0);
    expect(attached.map(shown)).to.deep.equal([
      { id: `eval-${id}`, state: 'complete', context: { evalId: id, jobId: 'web', triggeredBy: 'job-register', outcome: '2 placed, 0 stopped' } },
    ]);
    expect(detached).to.deep.equal([`eval-${id}`]);
    expect(log).to.deep.equal([`evaluation ${id.slice(0, 8)} (job-register, job web): 2 placed, 0 stopped`]);
  });

  it('an evaluation not in the store, or one already done, is a pass with nothing to do', async () => {
    broker.enqueue('no-such-eval');
    await broker.idle();
    const id = await register(await apiJob('web', 1), 0);
    broker.enqueue(id);
    await broker.idle();
    expect(attached.map(shown)).to.deep.equal([
      { id: 'eval-no-such-eval', state: 'complete', context: { evalId: 'no-such-eval', jobId: '', triggeredBy: '', outcome: 'nothing to do' } },
      { id: `eval-${id}`, state: 'complete', context: { evalId: id, jobId: 'web', triggeredBy: 'job-register', outcome: '1 placed, 0 stopped' } },
      { id: `eval-${id}`, state: 'complete', context: { evalId: id, jobId: 'web', triggeredBy: 'job-register', outcome: 'nothing to do' } },
    ]);
    expect(state.evals.has('no-such-eval')).to.equal(false);
  });

  it('a pass raises EvaluationUpdated for its evaluation, and a replacement raises one Allocation event per alloc: the stop and the placement', async () => {
    await register(await apiJob('web', 1), 0);
    const [old] = [...state.allocs.keys()];
    let id = '';
    const events = await eventsOf(async () => (id = await register(await apiJob('web', 1, 20), 1)));
    const ev = state.evals.get(id)!;
    expect(ev.plan!.stopped).to.deep.equal([old]);
    const [placed] = ev.plan!.placed;
    expect(events.filter((e) => e.topic !== 'Deployment').map((e) => [e.topic, e.type, e.key])).to.deep.equal([
      ['Evaluation', 'EvaluationUpdated', id], // the register's commit
      ['Allocation', 'AllocationUpdated', old],
      ['Allocation', 'PlanResult', placed],
      ['Evaluation', 'EvaluationUpdated', id],
    ]);
    // The predecessor's link to its replacement is written without an event of its own.
    expect(state.allocs.get(old!)!.nextAllocation).to.equal(placed);
  });

  it('a pass that fails raises EvaluationUpdated with the failed evaluation; its actor ends failed with the error', async () => {
    const failing = makeBroker({
      node: () => {
        throw new Error('no node fingerprint yet');
      },
    });
    const id = state.commit((txn) => newEval(txn, state, 'web', 'job-register').id);
    const events = await eventsOf(async () => {
      failing.enqueue(id);
      await failing.idle();
    });
    expect(events.map((e) => [e.topic, e.type, e.key, (e.object as { status: string }).status])).to.deep.equal([
      ['Evaluation', 'EvaluationUpdated', id, 'failed'],
    ]);
    expect(attached.map(shown)).to.deep.equal([
      { id: `eval-${id}`, state: 'failed', context: { evalId: id, jobId: 'web', triggeredBy: 'job-register', outcome: 'no node fingerprint yet' } },
    ]);
  });

  it('a failed pass of an evaluation deleted meanwhile (garbage collected) does not bring it back', async () => {
    let id = '';
    const failing = makeBroker({
      node: () => {
        state.commit((txn) => txn.deleteEval(id));
        throw new Error('no node fingerprint yet');
      },
    });
    id = state.commit((txn) => newEval(txn, state, 'web', 'job-register').id);
    const events = await eventsOf(async () => {
      failing.enqueue(id);
      await failing.idle();
    });
    expect(state.evals.has(id)).to.equal(false);
    expect(events).to.deep.equal([]);
    expect(log).to.deep.equal([`evaluation ${id.slice(0, 8)} failed: no node fingerprint yet`]);
  });

  it('a stop the client refuses is logged; the pass still completes and nothing is reported refused', async () => {
    const refused: Allocation[] = [];
    const b = makeBroker({ onRefused: (a) => refused.push(a) });
    await register(await apiJob('web', 1), 0, b);
    refuse.updateAlloc = 'the client is shutting down';
    const id = await register(await apiJob('web', 0), 1, b);
    expect(state.evals.get(id)).to.include({ status: 'complete' });
    expect(state.evals.get(id)!.plan!.stopped).to.have.length(1);
    expect(refused).to.deep.equal([]);
    expect(log).to.include('client refused an allocation: the client is shutting down');
  });

  it('with no onRefused, a placement the client refuses is logged and the pass still completes', async () => {
    refuse.addAlloc = 'driver mock_driver is not enabled';
    const id = await register(await apiJob('web', 1), 0);
    expect(state.evals.get(id)).to.include({ status: 'complete' });
    expect(log).to.deep.equal([
      'client refused an allocation: driver mock_driver is not enabled',
      `evaluation ${id.slice(0, 8)} (job-register, job web): 1 placed, 0 stopped`,
    ]);
  });

  it('unblock() twice while another pass is queued queues a blocked evaluation once: one pass, one actor', async () => {
    await register(await apiJob('big', 1, 64 * 1024), 0);
    const [blocked] = [...state.evals.values()].filter((e) => e.status === 'blocked');
    attached.length = 0;
    const other = commitJob(await apiJob('web', 1), 0);
    broker.enqueue(other);
    broker.unblock();
    broker.unblock();
    await broker.idle();
    expect(attached.map((a) => a.id)).to.deep.equal([`eval-${other}`, `eval-${blocked!.id}`]);
  });

  it('a stop while a queued evaluation waits for its turn leaves it pending, never run', async () => {
    const id = commitJob(await apiJob('web', 1), 0);
    broker.enqueue(id);
    await broker.stop();
    expect(state.evals.get(id)!.status).to.equal('pending');
    expect(attached).to.deep.equal([]);
    expect(real.runners()).to.deep.equal([]);
  });

  it('a delayed evaluation queued twice arms one timer, for the time left; after a stop none is armed', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      const parked = state.commit((txn) => newEval(txn, state, 'later', 'alloc-failure', { waitUntil: Date.now() + 60_000 }).id);
      // Count from the next turn: a timer armed there by anything else is in `before`.
      await new Promise((r) => setImmediate(r));
      const before = timeouts();
      broker.enqueue(parked);
      broker.enqueue(parked);
      expect(timeouts()).to.equal(before + 1);
      await new Promise((r) => setImmediate(r));
      // A delay past 2^31 - 1 ms would warn (TimeoutOverflowWarning) and fire at once.
      expect(warnings).to.deep.equal([]);
      await broker.stop();
      expect(timeouts()).to.equal(before);
      const late = state.commit((txn) => newEval(txn, state, 'later', 'alloc-failure', { waitUntil: Date.now() + 60_000 }).id);
      const after = timeouts();
      broker.enqueue(late);
      expect(timeouts(), 'a stopped broker arms no timer').to.equal(after);
      expect(state.evals.get(parked)!.status).to.equal('pending');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('reconcileClient hands a runner the stop the servers decided at the index it already has', () => {
    const a = makeAlloc([mockTask('t', { run_for: '1h' })], { allocModifyIndex: 5 });
    real.addAlloc(a);
    state.commit((txn) =>
      txn.putAlloc({
        alloc: { ...a, desiredStatus: 'stop', desiredDescription: 'alloc not needed' },
        createIndex: txn.index,
        modifyIndex: txn.index,
      } as ServerAlloc),
    );
    reconcileClient(state, real, (l) => log.push(l));
    expect(real.runner(a.id)!.alloc()).to.include({ desiredStatus: 'stop', desiredDescription: 'alloc not needed', allocModifyIndex: 5 });
    expect(log).to.deep.equal([]);
  });
});
