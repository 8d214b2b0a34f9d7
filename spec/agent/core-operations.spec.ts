/**
 * Each of the agent's operations (`agent/core.ts`) at its own path, without HTTP, on real parts
 * (SQLite, a real client with the mock driver, the jobspec worker): what each commits (the job,
 * the alloc, the evaluation and its trigger), what it leaves alone, and what it answers.
 */
import { expect } from 'chai';
import { firstValueFrom, filter } from 'rxjs';
import { DeploymentActionError, JobStoppedError } from '../../agent/errors.ts';
import type { StateEvent } from '../../agent/state/store.ts';
import type { ApiJob, ServerAlloc } from '../../agent/state/types.ts';
import { ManualClock } from '../support/fake-rpc.ts';
import { useServerHalves, type ServerHalf } from '../support/server-half.ts';

/** A job of `count` mock tasks that run until stopped, through the agent's jobspec canonicalisation. */
async function job(half: ServerHalf, id: string, over: Record<string, unknown> = {}, count = 1): Promise<ApiJob> {
  const spec = {
    ID: id,
    Type: 'service',
    Priority: 60,
    TaskGroups: [{ Name: 'g', Count: count, Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '1h' }, Resources: { CPU: 10, MemoryMB: 10 } }] }],
    ...over,
  };
  return half.core.jobspec.parse(JSON.stringify(spec), { filename: `job ${JSON.stringify(id)}` });
}

/** The job's server allocs. */
const allocsOf = (h: ServerHalf, jobId: string): ServerAlloc[] => [...h.state.allocs.values()].filter((s) => s.alloc.jobId === jobId);

/** Throws what `fn` throws, or fails. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

/** Waits until the server's view holds `count` running allocs of `jobId` (the client's reports committed). */
async function running(h: ServerHalf, jobId: string, count: number): Promise<ServerAlloc[]> {
  const ready = () => allocsOf(h, jobId).filter((s) => s.alloc.clientStatus === 'running' && s.alloc.desiredStatus === 'run').length === count;
  await h.core.broker.idle();
  if (!ready()) await firstValueFrom(h.state.events$.pipe(filter(ready)));
  return allocsOf(h, jobId).filter((s) => s.alloc.desiredStatus === 'run');
}

describe('agent core: each operation (real SQLite, real client)', function () {
  this.timeout(20_000);
  const half = useServerHalves();

  it("deregister stops the job (Stop on its record and its API job) with a job-deregister eval at the job's priority; its allocs are stopped", async () => {
    const h = half();
    h.core.register(await job(h, 'web'));
    const [a] = await running(h, 'web', 1);
    const r = h.core.deregister('web', false);
    const rec = h.state.jobs.get('web')!;
    expect([rec.stop, rec.apiJob.Stop, rec.jobModifyIndex, rec.apiJob.JobModifyIndex, rec.modifyIndex]).to.deep.equal([true, true, r.index, r.index, r.index]);
    expect(r.jobModifyIndex).to.equal(r.index);
    const ev = h.state.evals.get(r.evalId)!;
    expect(ev).to.deep.include({ jobId: 'web', triggeredBy: 'job-deregister', priority: 60, type: 'service', jobModifyIndex: r.index, createIndex: r.index });
    await h.core.broker.idle();
    expect(h.state.allocs.get(a!.alloc.id)?.alloc.desiredStatus).to.equal('stop');
    expect(h.state.evals.get(r.evalId)?.status).to.equal('complete');
  });

  it("deregister with purge forgets the job and its deployments at once; its eval is still made, at the job's priority", async () => {
    const h = half();
    h.core.register(await job(h, 'web', { Update: { MaxParallel: 1 } }));
    await running(h, 'web', 1);
    h.core.register(await job(h, 'web', { Update: { MaxParallel: 1 } }, 2)); // a new version: a deployment
    await h.core.broker.idle();
    expect([...h.state.deployments.values()].filter((d) => d.jobId === 'web')).to.not.have.length(0);
    const r = h.core.deregister('web', true);
    expect(h.state.jobs.has('web')).to.equal(false);
    expect([...h.state.deployments.values()].filter((d) => d.jobId === 'web')).to.have.length(0);
    expect(h.state.evals.get(r.evalId)).to.deep.include({ jobId: 'web', triggeredBy: 'job-deregister', priority: 60 });
    expect(thrown(() => h.core.deregister('web', true))).to.have.property('jobId', 'web');
  });

  it('stopAlloc marks the alloc stopped by the user, tells the client at once, and an alloc-stop eval places its replacement', async () => {
    const h = half();
    h.core.register(await job(h, 'web'));
    const [a] = await running(h, 'web', 1);
    const stopped = firstValueFrom(h.client.updates$.pipe(filter((u) => u.id === a!.alloc.id && u.desiredStatus === 'stop')));
    const r = h.core.stopAlloc(a!.alloc.id);
    const s = h.state.allocs.get(a!.alloc.id)!;
    expect(s.alloc).to.deep.include({ desiredStatus: 'stop', desiredDescription: 'alloc was stopped by the user', allocModifyIndex: r.index });
    expect(s.modifyIndex).to.equal(r.index);
    expect(h.state.evals.get(r.evalId)).to.deep.include({ jobId: 'web', triggeredBy: 'alloc-stop' });
    await stopped; // the client had it without waiting for the eval
    const [next] = await running(h, 'web', 1);
    expect(next!.alloc.id).to.not.equal(a!.alloc.id);
  });

  it('allocsLost marks each alloc lost and makes one node-update eval per job that still exists', async () => {
    const h = half();
    h.core.register(await job(h, 'web', {}, 2));
    const allocs = await running(h, 'web', 2);
    const before = new Set(h.state.evals.keys());
    const ghost = { ...allocs[0]!.alloc, id: 'not-on-server', jobId: 'gone' };
    h.core.allocsLost([...allocs.map((s) => ({ ...s.alloc, clientStatus: 'lost' as const })), ghost]);
    for (const s of allocs) expect(h.state.allocs.get(s.alloc.id)?.alloc.clientStatus).to.equal('lost');
    const made = [...h.state.evals.values()].filter((e) => !before.has(e.id));
    expect(made.map((e) => [e.jobId, e.triggeredBy])).to.deep.equal([['web', 'node-update']]);
    // Nothing lost of a job the server knows: no eval at all.
    const n = h.state.evals.size;
    h.core.allocsLost([ghost]);
    expect(h.state.evals.size).to.equal(n);
    await running(h, 'web', 2); // replaced
  });

  it("evaluate makes a job-eval eval answering the job's modify index; the job itself is not changed", async () => {
    const h = half();
    const reg = h.core.register(await job(h, 'web'));
    await h.core.broker.idle();
    const r = h.core.evaluate('web');
    expect(r).to.deep.include({ jobModifyIndex: reg.jobModifyIndex, evalCreateIndex: r.index });
    expect(h.state.evals.get(r.evalId)).to.deep.include({ triggeredBy: 'job-eval', jobModifyIndex: reg.jobModifyIndex });
    expect(h.state.jobs.get('web')?.jobModifyIndex).to.equal(reg.jobModifyIndex);
  });

  it('a parameterized parent is registered with no eval; a dispatch registers its child with one; the same token answers that child again', async () => {
    const h = half();
    const parent = await job(h, 'batch', { Type: 'batch', ParameterizedJob: { Payload: 'optional', MetaOptional: ['k'] } });
    const reg = h.core.register(parent);
    expect([reg.evalId, reg.evalCreateIndex]).to.deep.equal(['', 0]);
    expect([...h.state.evals.values()].filter((e) => e.jobId === 'batch')).to.have.length(0);
    const d = h.core.dispatch('batch', { meta: { k: 'v' }, idempotencyToken: 'tok' });
    expect(d.dispatchedJobId).to.match(/^batch\/dispatch-\d+-[0-9a-f]{8}$/);
    expect(d.evalId).to.not.equal('');
    expect(d.jobCreateIndex).to.equal(d.jobModifyIndex);
    const child = h.state.jobs.get(d.dispatchedJobId)!;
    expect(child.apiJob).to.deep.include({ ParentID: 'batch', Dispatched: true, DispatchIdempotencyToken: 'tok' });
    const evals = h.state.evals.size;
    const again = h.core.dispatch('batch', { meta: { k: 'v' }, idempotencyToken: 'tok' });
    expect(again).to.deep.include({ dispatchedJobId: d.dispatchedJobId, evalId: '', jobModifyIndex: child.jobModifyIndex, jobCreateIndex: child.createIndex });
    expect(h.state.evals.size).to.equal(evals);
    // Another token is another child.
    expect(h.core.dispatch('batch', { idempotencyToken: 'other' }).dispatchedJobId).to.not.equal(d.dispatchedJobId);
    h.core.deregister('batch', false);
    expect(thrown(() => h.core.dispatch('batch', {})))
      .to.be.instanceOf(JobStoppedError)
      .and.include({ jobId: 'batch', operation: 'dispatch' });
  });

  it('forcePeriodic launches a child of a periodic parent now and answers its eval; a stopped parent is refused', async () => {
    const h = half();
    h.core.register(await job(h, 'cron', { Type: 'batch', Periodic: { Enabled: true, Spec: '0 0 1 1 *', SpecType: 'cron', ProhibitOverlap: false } }));
    expect([...h.state.evals.values()].filter((e) => e.jobId === 'cron')).to.have.length(0);
    const r = h.core.forcePeriodic('cron');
    const ev = h.state.evals.get(r.evalId)!;
    expect(ev.jobId).to.match(/^cron\/periodic-\d+$/);
    expect(r.evalCreateIndex).to.equal(ev.createIndex);
    expect(h.state.jobs.get(ev.jobId)?.apiJob.ParentID).to.equal('cron');
    h.core.deregister('cron', false);
    expect(thrown(() => h.core.forcePeriodic('cron')))
      .to.be.instanceOf(JobStoppedError)
      .and.include({ operation: 'periodic-force' });
  });

  it("planJob answers the scheduler's plan at the version the job would get, beside the job as it is, and commits nothing", async () => {
    const h = half();
    const fresh = h.core.planJob(await job(h, 'web', {}, 2));
    expect(fresh.prev).to.equal(undefined);
    expect(fresh.job.version).to.equal(0);
    expect(fresh.plan.place.length).to.equal(2);
    const reg = h.core.register(await job(h, 'web', {}, 2));
    await running(h, 'web', 2);
    const index = h.state.waiters.index;
    const same = h.core.planJob(await job(h, 'web', {}, 2));
    expect(same.job.version).to.equal(0);
    expect(same.prev?.jobModifyIndex).to.equal(reg.jobModifyIndex);
    expect(same.plan.place).to.have.length(0);
    const bigger = h.core.planJob(await job(h, 'web', {}, 3));
    expect(bigger.job.version).to.equal(1);
    expect(bigger.plan.place).to.have.length(1);
    expect(bigger.index).to.equal(index);
    expect(h.state.waiters.index, 'nothing written').to.equal(index);
    expect(h.state.jobs.get('web')?.version).to.equal(0);
  });

  it('deployment actions: pause holds it (no eval), resume and fail each make a deployment-watcher eval, an ended one refuses', async () => {
    const h = half();
    h.core.register(await job(h, 'web', { Update: { MaxParallel: 1, MinHealthyTime: 3_600_000_000_000, HealthyDeadline: 7_200_000_000_000 } }));
    await running(h, 'web', 1);
    h.core.register(await job(h, 'web', { Update: { MaxParallel: 1, MinHealthyTime: 3_600_000_000_000, HealthyDeadline: 7_200_000_000_000 } }, 2));
    await h.core.broker.idle();
    const d = [...h.state.deployments.values()].find((x) => x.jobId === 'web' && x.status === 'running')!;
    expect(d, 'a running deployment').to.not.equal(undefined);
    const evals = h.state.evals.size;
    const p = h.core.deploymentAction(d.id, 'pause');
    expect(p.evalId).to.equal(undefined);
    expect(h.state.evals.size).to.equal(evals);
    expect(h.state.deployments.get(d.id)).to.deep.include({ status: 'paused', modifyIndex: p.deploymentModifyIndex });
    const r = h.core.deploymentAction(d.id, 'resume');
    expect(h.state.evals.get(r.evalId!)).to.deep.include({ jobId: 'web', triggeredBy: 'deployment-watcher', createIndex: r.evalCreateIndex });
    expect(h.state.deployments.get(d.id)?.status).to.equal('running');
    const f = h.core.deploymentAction(d.id, 'fail');
    expect(h.state.deployments.get(d.id)).to.deep.include({ status: 'failed', statusDescription: 'Deployment marked as failed' });
    expect(h.state.evals.get(f.evalId!)?.triggeredBy).to.equal('deployment-watcher');
    expect(f.revertedJobVersion).to.equal(undefined); // no auto_revert
    expect(thrown(() => h.core.deploymentAction(d.id, 'pause')))
      .to.be.instanceOf(DeploymentActionError)
      .and.include({ deploymentId: d.id });
  });

  it("a deployment short of healthy allocs at its progress deadline fails with Nomad's text and, with auto_revert, rolls back to the stable version", async () => {
    const clock = new ManualClock();
    clock.advance(Date.now()); // the deadlines are wall-clock times: start the manual clock at now
    const h = half({ deploymentClock: clock });
    const hour = 3_600_000_000_000; // ns
    const update = (minHealthy: number) => ({
      Update: { MaxParallel: 1, MinHealthyTime: minHealthy, HealthyDeadline: 2 * hour, ProgressDeadline: 3 * hour, AutoRevert: true },
    });
    h.core.register(await job(h, 'web', update(1_000_000))); // 1 ms: healthy at once, so version 0 turns stable
    await running(h, 'web', 1);
    const stable = () => [...h.state.deployments.values()].some((x) => x.jobId === 'web' && x.jobVersion === 0 && x.status === 'successful');
    if (!stable()) await firstValueFrom(h.state.events$.pipe(filter(stable)));
    h.core.register(await job(h, 'web', update(hour), 2)); // version 1: its allocs take an hour to be healthy
    await h.core.broker.idle();
    const d = [...h.state.deployments.values()].find((x) => x.jobId === 'web' && x.jobVersion === 1 && x.status === 'running')!;
    expect(d, 'version 1 deploys').to.not.equal(undefined);
    const evals = new Set(h.state.evals.keys());
    clock.advance(3 * 3_600_000 - 60_000); // a minute before the deadline: nothing
    expect(h.state.deployments.get(d.id)?.status).to.equal('running');
    clock.advance(2 * 60_000);
    expect(h.state.deployments.get(d.id)).to.deep.include({
      status: 'failed',
      statusDescription: 'Failed due to progress deadline - rolling back to job version 0',
    });
    const made = [...h.state.evals.values()].filter((e) => !evals.has(e.id));
    expect(made.map((e) => e.triggeredBy)).to.include('deployment-watcher');
    // The revert registered version 0's spec again, as version 2.
    const rec = h.state.jobs.get('web')!;
    expect(rec.version).to.equal(2);
    expect((rec.apiJob.TaskGroups as Array<{ Count: number }>)[0]!.Count).to.equal(1);
  });

  it('an operator fail of a deployment with auto_revert answers the version it reverted to', async () => {
    const h = half();
    const hour = 3_600_000_000_000;
    const update = (minHealthy: number) => ({
      Update: { MaxParallel: 1, MinHealthyTime: minHealthy, HealthyDeadline: 2 * hour, ProgressDeadline: 3 * hour, AutoRevert: true },
    });
    h.core.register(await job(h, 'web', update(1_000_000)));
    await running(h, 'web', 1);
    const stable = () => [...h.state.deployments.values()].some((x) => x.jobId === 'web' && x.jobVersion === 0 && x.status === 'successful');
    if (!stable()) await firstValueFrom(h.state.events$.pipe(filter(stable)));
    h.core.register(await job(h, 'web', update(hour), 2));
    await h.core.broker.idle();
    const d = [...h.state.deployments.values()].find((x) => x.jobId === 'web' && x.jobVersion === 1)!;
    const f = h.core.deploymentAction(d.id, 'fail');
    expect(f.revertedJobVersion).to.equal(0);
    expect(h.state.deployments.get(d.id)?.statusDescription).to.equal('Deployment marked as failed - rolling back to job version 0');
    expect(h.state.jobs.get('web')?.version).to.equal(2);
  });

  it('each operation publishes its change: the job registered or deregistered, the alloc and the deployment updated, keyed by id', async () => {
    const h = half();
    const seen: StateEvent[] = [];
    const sub = h.state.events$.subscribe((e) => seen.push(e));
    try {
      const reg = h.core.register(await job(h, 'web', { Update: { MaxParallel: 1 } }));
      expect(seen.filter((e) => e.topic === 'Job').map((e) => [e.type, e.key, e.index])).to.deep.equal([['JobRegistered', 'web', reg.index]]);
      expect((seen.find((e) => e.topic === 'Job')!.object as { id: string }).id).to.equal('web');
      const [a] = await running(h, 'web', 1);
      seen.length = 0;
      const stop = h.core.stopAlloc(a!.alloc.id);
      expect(seen.filter((e) => e.topic === 'Allocation' && e.index === stop.index).map((e) => [e.type, e.key])).to.deep.equal([
        ['AllocationUpdated', a!.alloc.id],
      ]);
      await running(h, 'web', 1);
      h.core.register(await job(h, 'web', { Update: { MaxParallel: 1 } }, 2));
      await h.core.broker.idle();
      const d = [...h.state.deployments.values()].find((x) => x.status === 'running')!;
      seen.length = 0;
      const p = h.core.deploymentAction(d.id, 'pause');
      expect(seen.map((e) => [e.topic, e.type, e.key, e.index])).to.deep.equal([['Deployment', 'DeploymentStatusUpdate', d.id, p.index]]);
      seen.length = 0;
      const dereg = h.core.deregister('web', false);
      const jobEvents = seen.filter((e) => e.topic === 'Job' && e.index === dereg.index);
      expect(jobEvents.map((e) => [e.type, e.key, (e.object as { stop: boolean }).stop])).to.deep.equal([['JobDeregistered', 'web', true]]);
      seen.length = 0;
      const purge = h.core.deregister('web', true);
      expect(seen.filter((e) => e.topic === 'Job' && e.index === purge.index).map((e) => [e.type, e.key])).to.deep.equal([['JobDeregistered', 'web']]);
    } finally {
      sub.unsubscribe();
    }
  });

  it('resumeEvals queues the pending evaluations an earlier run left, oldest first, and leaves the others', async () => {
    const h = half();
    h.core.register(await job(h, 'a'));
    h.core.register(await job(h, 'b'));
    await h.core.broker.idle();
    const done = [...h.state.evals.keys()];
    // Two pending evals written as a crash would leave them: committed, never queued.
    const ids = h.state.commit((txn) =>
      ['b', 'a'].map((jobId) => {
        const ev = {
          ...h.state.evals.get(done[0]!)!,
          id: `resume-${jobId}`,
          jobId,
          status: 'pending' as const,
          createIndex: txn.index,
          modifyIndex: txn.index,
        };
        txn.putEval(ev);
        return ev.id;
      }),
    );
    const order: string[] = [];
    const sub = h.state.events$.subscribe((e) => {
      if (e.topic === 'Evaluation' && ids.includes(e.key) && (e.object as { status: string }).status === 'complete') order.push(e.key);
    });
    try {
      h.core.resumeEvals();
      await h.core.broker.idle();
    } finally {
      sub.unsubscribe();
    }
    expect(order).to.deep.equal(['resume-b', 'resume-a']);
    for (const id of done) expect(h.state.evals.get(id)?.status).to.equal('complete');
  });
});
