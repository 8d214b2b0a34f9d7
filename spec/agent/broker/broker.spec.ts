/**
 * The evaluation broker (`agent/broker/broker.ts`) at its own path: on a real SQLite state in a
 * temp dir and a real in-process client (its mock driver), with no AgentCore and no HTTP. A
 * pending evaluation becomes a plan committed in one transaction (its allocs, the evaluation's
 * outcome), and only then reaches the client; a smaller count stops the extra alloc on the
 * client; a group that does not fit leaves a blocked evaluation; all of it survives a reopen.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, filter } from 'rxjs';
import { createClient } from '../../../actors/client/client.ts';
import type { Client } from '../../../actors/client/types.ts';
import { EvalBroker, jobOf, newEval, reconcileClient } from '../../../agent/broker/broker.ts';
import { DEFAULT_PREEMPTION } from '../../../agent/config/config.ts';
import { completeApiJob } from '../../../agent/jobspec/complete.ts';
import { parseJobspec } from '../../../agent/jobspec/index.ts';
import type { SchedulerNode } from '../../../agent/scheduler/index.ts';
import { AgentState } from '../../../agent/state/store.ts';
import type { ApiJob, JobRecord, ServerAlloc } from '../../../agent/state/types.ts';
import type { Allocation } from '../../../model/types.ts';
import type { StateEvent } from '../../../agent/state/store.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

const NODE: SchedulerNode = {
  id: '00000000-0000-4000-8000-000000000001',
  resources: { cpuMHz: 2000, memoryMB: 1024, diskMB: 10_000, cores: 2 },
  portsInUse: [],
  drivers: ['mock_driver'],
};

/** A service job of `count` mock tasks of `memoryMB` each, canonical as the agent stores it. */
async function apiJob(
  id: string,
  count: number,
  memoryMB = 10,
  extra: { job?: Record<string, unknown>; task?: Record<string, unknown> } = {},
): Promise<ApiJob> {
  const job = {
    ID: id,
    Type: 'service',
    ...extra.job,
    TaskGroups: [
      {
        Name: 'g',
        Count: count,
        Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '1h' }, Resources: { CPU: 10, MemoryMB: memoryMB }, ...extra.task }],
      },
    ],
  };
  return (await parseJobspec(JSON.stringify(job), { filename: `job ${id}` })) as unknown as ApiJob;
}

describe('agent eval broker (real SQLite, real client)', function () {
  this.timeout(20_000);
  let dir: string;
  let state: AgentState;
  let client: Client;
  let broker: EvalBroker;
  let log: string[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-broker-'));
    state = new AgentState(join(dir, 'server', 'state.db'));
    state.commit((txn) => txn.putSchedulerConfig({ preemption: { ...DEFAULT_PREEMPTION }, createIndex: txn.index, modifyIndex: txn.index }));
    client = createClient({ dataDir: join(dir, 'client'), nodeId: NODE.id });
    log = [];
    broker = new EvalBroker({ state, client, node: () => NODE, log: (l) => log.push(l) });
  });
  afterEach(async () => {
    await broker.stop();
    await Promise.allSettled(client.runners().map((r) => r.destroy()));
    await client.shutdown();
    if (!state.closed) state.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Commits version `version` of `job` with its register evaluation, and queues the evaluation. */
  function register(job: ApiJob, version: number): string {
    const evalId = state.commit((txn) => {
      const now = Date.now();
      const rec: JobRecord = {
        id: job.ID,
        namespace: 'default',
        version,
        apiJob: completeApiJob({ ...job, Version: version }),
        createIndex: state.jobs.get(job.ID)?.createIndex ?? txn.index,
        modifyIndex: txn.index,
        jobModifyIndex: txn.index,
        submitTime: now,
        modifyTime: now,
        stop: false,
      };
      txn.putJob(rec);
      return newEval(txn, state, job.ID, 'job-register', {}, rec).id;
    });
    broker.enqueue(evalId);
    return evalId;
  }

  /** Resolves with the evaluation once it is committed with `status`. */
  const evalReaches = (id: string, status: string) =>
    firstValueFrom(
      state.events$.pipe(filter((e: StateEvent) => e.topic === 'Evaluation' && e.key === id && (e.object as { status: string }).status === status)),
    );

  it('processes a pending evaluation to a committed plan, then hands the client its allocs', async () => {
    const running = firstValueFrom(client.updates$.pipe(filter((a) => a.clientStatus === 'running')));
    const seen: string[] = [];
    const sub = state.events$.subscribe((e) => {
      // The client is handed an alloc only after the commit that holds it: no runner at event time.
      if (e.topic === 'Allocation' && e.type === 'PlanResult') seen.push(client.runner(e.key) ? 'before' : 'after');
    });
    const evalId = register(await apiJob('web', 2), 0);
    await broker.idle();
    sub.unsubscribe();
    const ev = state.evals.get(evalId)!;
    expect(ev.status, log.join('\n')).to.equal('complete');
    expect(ev.plan?.placed).to.have.length(2);
    expect(seen).to.deep.equal(['after', 'after']);
    const allocs = [...state.allocs.values()];
    expect(allocs.map((s) => s.alloc.id).sort()).to.deep.equal([...ev.plan!.placed].sort());
    for (const s of allocs) {
      expect(s.alloc.evalId).to.equal(evalId);
      expect(s.createIndex).to.equal(ev.modifyIndex);
      expect(client.runner(s.alloc.id), s.alloc.id).to.not.equal(undefined);
    }
    expect((await running).jobId).to.equal('web');
    expect(log.join('\n')).to.match(/job web\): 2 placed, 0 stopped/);
  });

  it('a smaller count stops the extra alloc in the state and on the client', async () => {
    register(await apiJob('web', 2), 0);
    await broker.idle();
    const evalId = register(await apiJob('web', 1), 1);
    await broker.idle();
    const stopped = state.evals.get(evalId)!.plan!.stopped;
    expect(stopped).to.have.length(1);
    const victim = state.allocs.get(stopped[0]!)!.alloc;
    expect(victim.desiredStatus).to.equal('stop');
    // Handed to the client's runner with the commit's server fields.
    expect(client.runner(victim.id)!.alloc().desiredStatus).to.equal('stop');
    expect(state.allocs.get(stopped[0]!)!.alloc.allocModifyIndex).to.equal(state.evals.get(evalId)!.modifyIndex);
  });

  it('a group that does not fit leaves a blocked evaluation; the plan and the block are there after a reopen', async () => {
    const evalId = register(await apiJob('big', 1, 64 * 1024), 0);
    await broker.idle();
    const ev = state.evals.get(evalId)!;
    expect(ev.status, log.join('\n')).to.equal('complete');
    expect(ev.plan?.placed).to.deep.equal([]);
    const blocked = [...state.evals.values()].filter((e) => e.status === 'blocked');
    expect(blocked.map((e) => e.jobId)).to.deep.equal(['big']);
    expect(client.runners()).to.have.length(0);
    expect(log.join('\n')).to.match(/job big\): 0 placed, 0 stopped, blocked$/m);
    await broker.stop();
    state.close();
    const again = new AgentState(join(dir, 'server', 'state.db'));
    try {
      expect(again.evals.get(evalId)?.status).to.equal('complete');
      expect([...again.evals.values()].filter((e) => e.status === 'blocked').map((e) => e.id)).to.deep.equal(blocked.map((e) => e.id));
    } finally {
      again.close();
    }
  });

  it('a job that stays blocked keeps one blocked evaluation over many evaluations of it, refreshed, none canceled (issue #40)', async () => {
    const first = register(await apiJob('big', 1, 64 * 1024), 0);
    await broker.idle();
    const [blocked] = [...state.evals.values()].filter((e) => e.status === 'blocked');
    expect(state.evals.get(first)?.blockedEval).to.equal(blocked!.id);
    // What a client update does while the job waits: another evaluation of it (a deployment
    // watcher's, an alloc's failure), and an unblock.
    const later: string[] = [];
    for (let i = 0; i < 20; i++) {
      const id = state.commit((txn) => newEval(txn, state, 'big', 'deployment-watcher').id);
      later.push(id);
      broker.enqueue(id);
      broker.unblock();
    }
    await broker.idle();
    const ofJob = [...state.evals.values()].filter((e) => e.jobId === 'big');
    expect(ofJob.filter((e) => e.status === 'blocked').map((e) => e.id)).to.deep.equal([blocked!.id]);
    expect(ofJob.filter((e) => e.status === 'canceled')).to.deep.equal([]);
    expect(ofJob).to.have.length(22);
    for (const id of later) expect(state.evals.get(id)).to.include({ status: 'complete', blockedEval: blocked!.id });
    const kept = state.evals.get(blocked!.id)!;
    expect(kept.modifyIndex).to.be.greaterThan(blocked!.modifyIndex);
    expect(kept.failedTgAllocs).to.have.property('g');
  });

  it('jobOf parses a stored version once, with its version; a stopped job and a periodic parent reach the scheduler stopped', async () => {
    const web = await apiJob('web', 1);
    const rec = (over: Partial<JobRecord>, api: Partial<ApiJob> = {}): JobRecord =>
      ({ id: 'web', namespace: 'default', version: 3, stop: false, ...over, apiJob: completeApiJob({ ...web, ...api }) }) as JobRecord;

    const live = rec({});
    expect(jobOf(live)).to.equal(jobOf(live));
    expect(jobOf(live)).to.include({ version: 3 }).and.not.have.property('stop');
    expect(jobOf(rec({ stop: true })).stop).to.equal(true);
    expect(jobOf(rec({}, { Type: 'batch', Periodic: { Enabled: true, Spec: '* * * * *', SpecType: 'cron' } } as never)).stop).to.equal(true);
  });

  it('newEval commits a pending evaluation with its event; one for a job not stored is a service evaluation without a job index', async () => {
    const events: StateEvent[] = [];
    const sub = state.events$.subscribe((e) => events.push(e));
    const ev = state.commit((txn) => newEval(txn, state, 'ghost', 'job-deregister', { priority: 70 }));
    sub.unsubscribe();
    expect(ev).to.include({
      jobId: 'ghost',
      type: 'service',
      triggeredBy: 'job-deregister',
      status: 'pending',
      priority: 70,
      createIndex: state.waiters.index,
      modifyIndex: state.waiters.index,
    });
    expect(ev).to.not.have.property('jobModifyIndex');
    expect(state.evals.get(ev.id)).to.deep.equal(ev);
    expect(events.map((e) => [e.topic, e.type, e.key, e.object])).to.deep.equal([['Evaluation', 'EvaluationUpdated', ev.id, ev]]);
    register(await apiJob('web', 1), 0);
    await broker.idle();
    const rec = state.jobs.get('web')!;
    const again = state.commit((txn) => newEval(txn, state, 'web', 'job-register'));
    expect(again.jobModifyIndex).to.equal(rec.jobModifyIndex);
  });

  it('an evaluation that is not pending or blocked is left as it is, with no pass logged', async () => {
    const id = register(await apiJob('web', 1), 0);
    await broker.idle();
    const done = state.evals.get(id)!;
    log.length = 0;
    broker.enqueue(id);
    await broker.idle();
    expect(state.evals.get(id)).to.deep.equal(done);
    expect(log).to.deep.equal([]);
  });

  it('a delayed evaluation waits for its waitUntil, and stop() drops its timer leaving it pending', async () => {
    const at = Date.now() + 30;
    const delayed = state.commit((txn) => newEval(txn, state, 'later', 'alloc-failure', { waitUntil: at }).id);
    const done = evalReaches(delayed, 'complete');
    broker.enqueue(delayed);
    broker.enqueue(delayed); // queued once
    await broker.idle();
    expect(state.evals.get(delayed)!.status, 'not before its time').to.equal('pending');
    await done;
    expect(Date.now()).to.be.at.least(at);
    expect(log.filter((l) => l.includes('(alloc-failure, job later)'))).to.have.length(1);

    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const parked = state.commit((txn) => newEval(txn, state, 'later', 'alloc-failure', { waitUntil: Date.now() + 60_000 }).id);
    broker.enqueue(parked);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).to.equal(before + 1);
    await broker.stop();
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).to.equal(before);
    broker.enqueue(state.commit((txn) => newEval(txn, state, 'later', 'job-register').id));
    await broker.idle();
    expect(state.evals.get(parked)!.status).to.equal('pending');
    expect([...state.evals.values()].filter((e) => e.status === 'pending')).to.have.length(2);
  });

  it('a pass that throws commits the evaluation failed with the error, and logs it', async () => {
    const failing = new EvalBroker({
      state,
      client,
      node: () => {
        throw new Error('no node fingerprint yet');
      },
      log: (l) => log.push(l),
    });
    const id = state.commit((txn) => newEval(txn, state, 'web', 'job-register').id);
    failing.enqueue(id);
    await failing.idle();
    expect(state.evals.get(id)).to.include({ status: 'failed', statusDescription: 'no node fingerprint yet', modifyIndex: state.waiters.index });
    expect(log).to.deep.equal([`evaluation ${id.slice(0, 8)} failed: no node fingerprint yet`]);
    await failing.stop();
  });

  it('an alloc the client refuses is logged and reported failed with the client’s reason', async () => {
    const refused: Allocation[] = [];
    const refusing = new Proxy(client, {
      get: (t, k) =>
        k === 'addAlloc'
          ? () => {
              throw new Error('driver mock_driver is not enabled');
            }
          : ((v: unknown) => (typeof v === 'function' ? v.bind(t) : v))(Reflect.get(t, k)),
    });
    const jobsWeb = await apiJob('web', 1);
    const b = new EvalBroker({ state, client: refusing, node: () => NODE, log: (l) => log.push(l), onRefused: (a) => refused.push(a) });
    const id = state.commit((txn) => {
      const rec = {
        id: 'web',
        namespace: 'default',
        version: 0,
        apiJob: completeApiJob(jobsWeb),
        createIndex: txn.index,
        modifyIndex: txn.index,
        jobModifyIndex: txn.index,
        submitTime: 1,
        stop: false,
      } as JobRecord;
      txn.putJob(rec);
      return newEval(txn, state, 'web', 'job-register', {}, rec).id;
    });
    b.enqueue(id);
    await b.idle();
    await b.stop();
    const placed = state.evals.get(id)!.plan!.placed;
    expect(refused.map((a) => [a.id, a.clientStatus, a.clientDescription])).to.deep.equal([
      [placed[0], 'failed', 'Unable to add allocation due to error: driver mock_driver is not enabled'],
    ]);
    expect(log).to.include('client refused an allocation: driver mock_driver is not enabled');
  });

  it('a change made in place is logged as such and reaches the running alloc; stops raise AllocationUpdated, placements PlanResult', async () => {
    const running = firstValueFrom(client.updates$.pipe(filter((a) => a.clientStatus === 'running')));
    register(await apiJob('web', 1), 0);
    await broker.idle();
    await running;
    const [first] = [...state.allocs.keys()];
    const types: string[] = [];
    const sub = state.events$.subscribe((e) => e.topic === 'Allocation' && types.push(`${e.type} ${e.key === first ? 'old' : 'new'}`));
    register(await apiJob('web', 1, 10, { task: { KillTimeout: 9_000_000_000 } }), 1);
    await broker.idle();
    expect(log.at(-1)).to.match(/: 0 placed, 0 stopped, 1 updated in place$/);
    const stored = state.allocs.get(first!)!.alloc;
    expect(stored.job.taskGroups[0]!.tasks[0]!.killTimeoutMs).to.equal(9000);
    // The runner takes the update on its own turn: wait for it to carry the commit's index.
    for (let i = 0; client.runner(first!)!.alloc().allocModifyIndex !== stored.allocModifyIndex; i++) {
      if (i > 10_000) throw new Error(`the runner never got the in-place update: ${log.join('\n')}`);
      await new Promise((r) => setImmediate(r));
    }
    expect(client.runner(first!)!.alloc().job.taskGroups[0]!.tasks[0]!.killTimeoutMs).to.equal(9000);
    expect(types).to.deep.equal(['AllocationUpdated old']);
    types.length = 0;
    register(await apiJob('web', 1, 20), 2);
    await broker.idle();
    sub.unsubscribe();
    expect(types).to.include('AllocationUpdated old').and.include('PlanResult new');
  });

  it('with service preemption on, a higher-priority job evicts a lower one: logged, recorded on the eval and the victim', async () => {
    state.commit((txn) =>
      txn.putSchedulerConfig({ preemption: { ...DEFAULT_PREEMPTION, serviceSchedulerEnabled: true }, createIndex: 1, modifyIndex: txn.index }),
    );
    register(await apiJob('low', 1, 800, { job: { Priority: 20 } }), 0);
    await broker.idle();
    const [victim] = [...state.allocs.keys()];
    const id = register(await apiJob('high', 1, 600, { job: { Priority: 80 } }), 0);
    await broker.idle();
    const ev = state.evals.get(id)!;
    expect(log.join('\n')).to.match(/job high\): 1 placed, 0 stopped, 1 preempted/);
    expect(ev.plan!.preempted).to.deep.equal([{ allocId: victim, by: ev.plan!.placed[0] }]);
    expect(state.allocs.get(victim!)!.preemptedBy).to.equal(ev.plan!.placed[0]);
    expect(client.runner(victim!)!.alloc().desiredStatus).to.equal('evict');
  });

  it('unblock() retries a blocked evaluation once the room is there', async () => {
    register(await apiJob('fill', 1, 900), 0);
    await broker.idle();
    register(await apiJob('wait', 1, 500), 0);
    await broker.idle();
    const [blocked] = [...state.evals.values()].filter((e) => e.status === 'blocked');
    expect(blocked!.jobId).to.equal('wait');
    broker.unblock();
    await broker.idle();
    expect(state.evals.get(blocked!.id)!.status, 'no room yet: still blocked').to.equal('blocked');
    register(await apiJob('fill', 0, 900), 1);
    await broker.idle();
    log.length = 0;
    broker.unblock();
    broker.unblock(); // queued once
    await broker.idle();
    expect(state.evals.get(blocked!.id)!.status).to.equal('complete');
    expect(log.filter((l) => l.includes('job wait): 1 placed'))).to.have.length(1);
    expect([...state.allocs.values()].filter((s) => s.alloc.jobId === 'wait' && s.alloc.desiredStatus === 'run')).to.have.length(1);
  });
});

describe('reconcileClient: after a restart the client catches up with the servers', function () {
  this.timeout(20_000);
  let dir: string;
  let state: AgentState;
  let client: Client;
  let log: string[];
  let lost: Allocation[];
  const put = (a: Allocation) => state.commit((txn) => txn.putAlloc({ alloc: a, createIndex: txn.index, modifyIndex: txn.index } as ServerAlloc));
  const reconcile = () =>
    reconcileClient(
      state,
      client,
      (l) => log.push(l),
      (a) => lost.push(a),
    );
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-reconcile-'));
    state = new AgentState(join(dir, 'server', 'state.db'));
    client = createClient({ dataDir: join(dir, 'client'), nodeId: NODE.id });
    log = [];
    lost = [];
  });
  afterEach(async () => {
    await Promise.allSettled(client.runners().map((r) => r.destroy()));
    await client.shutdown();
    state.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds an alloc placed but never handed over, reports lost one the client started but no longer knows, and leaves terminal ones', () => {
    const placed = makeAlloc([mockTask('t', { run_for: '1h' })]);
    const started = makeAlloc([mockTask('t')], { clientStatus: 'running' });
    const stopping = makeAlloc([mockTask('t')], { desiredStatus: 'stop', clientStatus: 'pending' });
    const finished = makeAlloc([mockTask('t')], { clientStatus: 'complete' });
    for (const a of [placed, started, stopping, finished]) put(a);
    reconcile();
    expect(client.runners().map((r) => r.alloc().id)).to.deep.equal([placed.id]);
    expect(lost.map((a) => [a.id, a.clientStatus, a.clientDescription])).to.deep.equal([
      [started.id, 'lost', 'the client has no state for this allocation (its state store was repaired or lost)'],
      [stopping.id, 'lost', 'the client has no state for this allocation (its state store was repaired or lost)'],
    ]);
    expect(log).to.deep.equal(
      [started, stopping].map((a) => `allocation ${a.id.slice(0, 8)} is unknown to the client (its state was repaired or lost): reported lost`),
    );
  });

  it('hands a runner the stop the servers decided meanwhile, and a newer server version; leaves a runner already current', () => {
    const stopped = makeAlloc([mockTask('t', { run_for: '1h' })]);
    const newer = makeAlloc([mockTask('t', { run_for: '1h' })]);
    const current = makeAlloc([mockTask('t', { run_for: '1h' })]);
    for (const a of [stopped, newer, current]) client.addAlloc(a);
    put({ ...stopped, desiredStatus: 'stop', desiredDescription: 'alloc not needed', allocModifyIndex: 2 });
    put({ ...newer, jobVersion: 4, allocModifyIndex: 3 });
    put({ ...current, jobVersion: 9 }); // same index: the runner has it already
    reconcile();
    expect(client.runner(stopped.id)!.alloc()).to.include({ desiredStatus: 'stop', desiredDescription: 'alloc not needed', allocModifyIndex: 2 });
    expect(client.runner(newer.id)!.alloc()).to.include({ desiredStatus: 'run', jobVersion: 4, allocModifyIndex: 3 });
    expect(client.runner(current.id)!.alloc()).to.not.have.property('jobVersion');
    expect([log, lost]).to.deep.equal([[], []]);
  });

  it('an alloc the client refuses is logged and the others still reconciled', () => {
    const bad = makeAlloc([mockTask('../t')]);
    const good = makeAlloc([mockTask('t', { run_for: '1h' })]);
    put(bad);
    put(good);
    reconcile();
    expect(log).to.have.length(1);
    expect(log[0]).to.match(new RegExp(`^cannot reconcile allocation ${bad.id.slice(0, 8)}: .+`));
    expect(client.runner(good.id)).to.not.equal(undefined);
  });
});
