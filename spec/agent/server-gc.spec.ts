/**
 * The server half's state stays bounded: a job keeps its last 6 versions (Nomad's
 * `JobTrackedVersions`); the server GC, on an injected clock, removes terminal evaluations,
 * allocations, deployments and dead jobs past Nomad's thresholds and keeps the rest; the rows of
 * a purged job go as soon as they are terminal (checked in SQLite itself); the event replay
 * buffer stays under its byte bound with large events.
 */
import { expect } from 'chai';
import { Subject } from 'rxjs';
import { DEFAULT_SERVER_GC } from '../../agent/config/config.ts';
import { ServerGc } from '../../agent/gc/server-gc.ts';
import { EventHub } from '../../agent/http/events.ts';
import { AgentState, JOB_TRACKED_VERSIONS, type Kind } from '../../agent/state/store.ts';
import type { Deployment, Evaluation, JobRecord, ServerAlloc } from '../../agent/state/types.ts';
import type { AgentCore } from '../../agent/core.ts';
import type { Clock } from '../../index.ts';

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;

/** A clock the spec moves; its one pending timer fires when time passes it. */
function manualClock() {
  let now = T0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  let next = 0;
  const clock: Clock = {
    now: () => now,
    setTimeout: (fn, ms) => (timers.set(++next, { at: now + ms, fn }), next),
    clearTimeout: (h) => void timers.delete(h as number),
  };
  return { clock, timers, set: (t: number) => (now = t) };
}

const job = (id: string, over: Partial<JobRecord> = {}): JobRecord =>
  ({
    id,
    namespace: 'default',
    version: 0,
    apiJob: { ID: id, Type: 'service', Meta: {} },
    createIndex: 1,
    modifyIndex: 1,
    jobModifyIndex: 1,
    submitTime: T0,
    modifyTime: T0,
    stop: false,
    ...over,
  }) as unknown as JobRecord;
const evalOf = (id: string, jobId: string, status = 'complete'): Evaluation =>
  ({ id, jobId, namespace: 'default', type: 'service', status, createIndex: 1, modifyIndex: 1, modifyTime: T0 }) as unknown as Evaluation;
const allocOf = (id: string, jobId: string, evalId: string, desiredStatus: string, clientStatus: string): ServerAlloc =>
  ({
    alloc: { id, jobId, evalId, taskGroup: 'g', desiredStatus, clientStatus, createTime: T0, modifyTime: T0, job: { taskGroups: [] } },
    createIndex: 1,
    modifyIndex: 1,
  }) as unknown as ServerAlloc;
const deploymentOf = (id: string, jobId: string, status: Deployment['status']): Deployment =>
  ({ id, jobId, namespace: 'default', status, createIndex: 1, modifyIndex: 1, createTime: T0, modifyTime: T0, taskGroups: {} }) as unknown as Deployment;

describe('agent: server state bounds and GC', () => {
  const states: AgentState[] = [];
  const gcs: ServerGc[] = [];
  const newState = () => {
    const s = new AgentState(':memory:');
    states.push(s);
    return s;
  };
  const newGc = (state: AgentState, clock: Clock) => {
    const gc = new ServerGc({
      state,
      client: { runner: () => undefined, gcAlloc: async () => undefined },
      config: DEFAULT_SERVER_GC,
      clock,
      log: () => undefined,
    });
    gcs.push(gc);
    return gc;
  };
  afterEach(async () => {
    for (const g of gcs.splice(0)) await g.stop();
    for (const s of states.splice(0)) s.close();
  });
  const ids = (s: AgentState, kind: Kind) => s.storedIds(kind);

  it(`keeps the last ${JOB_TRACKED_VERSIONS} versions of a job registered 20 times, in memory and in SQLite`, () => {
    const s = newState();
    for (let v = 0; v < 20; v++) s.commit((txn) => txn.putJob(job('web', { version: v, apiJob: { ID: 'web', Meta: { v: String(v) } } as never })));
    expect(s.versions.get('web')!.map((j) => j.version)).to.deep.equal([14, 15, 16, 17, 18, 19]);
    expect(ids(s, 'jobVersion')).to.have.length(6);
    expect(ids(s, 'jobVersion')).to.include('web@19').and.not.include('web@13');
  });

  it('collects terminal evals/allocs/deployments past 1h and dead jobs past 4h on the periodic pass; keeps the live job', async () => {
    const s = newState();
    const c = manualClock();
    s.commit((txn) => {
      txn.putJob(job('old', { stop: true }));
      txn.putEval(evalOf('e1', 'old'));
      txn.putAlloc(allocOf('a1', 'old', 'e1', 'stop', 'complete'));
      txn.putDeployment(deploymentOf('d1', 'old', 'successful'));
      txn.putJob(job('live'));
      txn.putEval(evalOf('e2', 'live'));
      txn.putAlloc(allocOf('a2', 'live', 'e2', 'run', 'running'));
      txn.putEval(evalOf('e3', 'live'));
      txn.putAlloc(allocOf('a3', 'live', 'e3', 'stop', 'complete'));
      txn.putDeployment(deploymentOf('d2', 'live', 'running'));
      txn.putEval(evalOf('e4', 'live', 'pending'));
    });
    const gc = newGc(s, c.clock);
    gc.start();
    const tick = async (t: number) => {
      c.set(t);
      const [[h, timer]] = [...c.timers];
      expect(timer!.at).to.be.at.most(t);
      c.timers.delete(h!);
      timer!.fn();
      // The pass, then the re-armed timer.
      while (c.timers.size === 0) await new Promise((r) => setImmediate(r));
    };
    expect([...c.timers.values()][0]!.at).to.equal(T0 + DEFAULT_SERVER_GC.jobGcIntervalMs);

    await tick(T0 + 30 * 60_000);
    expect(ids(s, 'eval')).to.deep.equal(['e1', 'e2', 'e3', 'e4']);

    await tick(T0 + HOUR + 1);
    expect(ids(s, 'eval')).to.deep.equal(['e2', 'e4']);
    expect(ids(s, 'alloc')).to.deep.equal(['a2']);
    expect(ids(s, 'deployment')).to.deep.equal(['d2']);
    expect(ids(s, 'job')).to.deep.equal(['live', 'old']);

    await tick(T0 + 4 * HOUR + 1);
    expect(ids(s, 'job')).to.deep.equal(['live']);
    expect([...s.jobs.keys()]).to.deep.equal(['live']);
    expect([...s.evals.keys()].sort()).to.deep.equal(['e2', 'e4']);
  });

  it('a forced pass ignores ages; the rows of a purged job go once terminal, leaving no row of it in SQLite', async () => {
    const s = newState();
    const c = manualClock();
    s.commit((txn) => {
      for (let v = 0; v < 3; v++) txn.putJob(job('gone', { version: v }));
      txn.putEval(evalOf('e1', 'gone'));
      txn.putAlloc(allocOf('a1', 'gone', 'e1', 'run', 'running'));
      txn.putJob(job('stopped', { stop: true }));
      txn.putEval(evalOf('e2', 'stopped'));
    });
    const gc = newGc(s, c.clock);
    expect(await gc.run({ force: true })).to.deep.include({ jobs: 1, evals: 1 });
    expect(ids(s, 'job')).to.deep.equal(['gone']);

    s.commit((txn) => txn.deleteJob('gone'));
    await gc.run();
    // The alloc still runs: its row (and its eval's) stays until it is over.
    expect(ids(s, 'alloc')).to.deep.equal(['a1']);
    s.commit((txn) => {
      const a = s.allocs.get('a1')!;
      txn.putAlloc({ ...a, alloc: { ...a.alloc, desiredStatus: 'stop', clientStatus: 'complete' } });
    });
    await gc.run();
    for (const kind of ['job', 'jobVersion', 'eval', 'alloc', 'deployment'] as const) expect(ids(s, kind), kind).to.deep.equal([]);
  });

  it('keeps the replay buffer under its byte bound with large events', () => {
    const s = newState();
    const core = { state: s, client: { bus: { messages$: new Subject() } } } as unknown as AgentCore;
    const hub = new EventHub(core, 1024 * 1024);
    const big = 'x'.repeat(200 * 1024);
    for (let i = 0; i < 50; i++)
      s.commit((txn) => txn.event({ topic: 'Job', type: 'JobRegistered', key: `j${i}`, object: { apiJob: { ID: `j${i}`, Big: big } } }));
    expect(hub.bytes).to.be.at.most(1024 * 1024);
    expect(hub.recent.length).to.be.within(1, 5);
    expect(hub.recent.at(-1)!.key).to.equal('j49');
    expect(hub.bytes).to.equal(hub.recent.reduce((n, e) => n + e.size, 0));
  });
});
