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
import { EvalBroker, newEval } from '../../../agent/broker/broker.ts';
import { DEFAULT_PREEMPTION } from '../../../agent/config/config.ts';
import { completeApiJob } from '../../../agent/jobspec/complete.ts';
import { parseJobspec } from '../../../agent/jobspec/index.ts';
import type { SchedulerNode } from '../../../agent/scheduler/index.ts';
import { AgentState } from '../../../agent/state/store.ts';
import type { ApiJob, JobRecord } from '../../../agent/state/types.ts';

const NODE: SchedulerNode = {
  id: '00000000-0000-4000-8000-000000000001',
  resources: { cpuMHz: 2000, memoryMB: 1024, diskMB: 10_000, cores: 2 },
  portsInUse: [],
  drivers: ['mock_driver'],
};

/** A service job of `count` mock tasks of `memoryMB` each, canonical as the agent stores it. */
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
});
