/**
 * Each of the agent's operations (`agent/core.ts`) at its own path, without HTTP, on real parts
 * (SQLite, a real client with the mock driver, the jobspec worker): what each commits (the job,
 * the alloc, the evaluation and its trigger), what it leaves alone, and what it answers.
 */
import { expect } from 'chai';
import { firstValueFrom, filter } from 'rxjs';
import { DeploymentActionError, InvalidPeriodicError, JobNotFoundError, JobStoppedError, PeriodicLaunchExistsError } from '../../agent/errors.ts';
import type { StateEvent } from '../../agent/state/store.ts';
import type { ApiJob, Deployment, ServerAlloc } from '../../agent/state/types.ts';
import { ManualClock } from '../support/fake-rpc.ts';
import { mockServiceJob, useServerHalves, type ServerHalf } from '../support/server-half.ts';
import { thrown } from '../support/thrown.ts';

/** A job of `count` mock tasks that run until stopped (priority 60 unless `over` says), through the agent's jobspec canonicalisation. */
const job = (half: ServerHalf, id: string, over: Record<string, unknown> = {}, count = 1): Promise<ApiJob> =>
  mockServiceJob(half, id, { count, job: { Priority: 60, ...over } });

/** The job's server allocs. */
const allocsOf = (h: ServerHalf, jobId: string): ServerAlloc[] => [...h.state.allocs.values()].filter((s) => s.alloc.jobId === jobId);

/** Waits until the server's view holds `count` running allocs of `jobId` (the client's reports committed). */
async function running(h: ServerHalf, jobId: string, count: number): Promise<ServerAlloc[]> {
  const ready = () => allocsOf(h, jobId).filter((s) => s.alloc.clientStatus === 'running' && s.alloc.desiredStatus === 'run').length === count;
  await h.core.broker.idle();
  if (!ready()) await firstValueFrom(h.state.events$.pipe(filter(ready)));
  return allocsOf(h, jobId).filter((s) => s.alloc.desiredStatus === 'run');
}

/**
 * Version 0 of `web` with auto_revert, healthy at once (1 ms) so it turns stable, then version 1
 * (two allocs) whose allocs take an hour to be healthy: answers version 1's running deployment.
 */
async function revertableRollout(h: ServerHalf): Promise<Deployment> {
  const hour = 3_600_000_000_000; // ns
  const update = (minHealthy: number) => ({
    Update: { MaxParallel: 1, MinHealthyTime: minHealthy, HealthyDeadline: 2 * hour, ProgressDeadline: 3 * hour, AutoRevert: true },
  });
  h.core.register(await job(h, 'web', update(1_000_000)));
  await running(h, 'web', 1);
  const stable = () => [...h.state.deployments.values()].some((x) => x.jobId === 'web' && x.jobVersion === 0 && x.status === 'successful');
  if (!stable()) await firstValueFrom(h.state.events$.pipe(filter(stable)));
  h.core.register(await job(h, 'web', update(hour), 2));
  await h.core.broker.idle();
  const d = [...h.state.deployments.values()].find((x) => x.jobId === 'web' && x.jobVersion === 1 && x.status === 'running');
  expect(d, 'version 1 deploys').to.not.equal(undefined);
  return d!;
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
    const d = await revertableRollout(h);
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
    const d = await revertableRollout(h);
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
    const template = h.state.evals.get(done[0]!)!;
    // Two pending evals written as a crash would leave them: committed, never queued; the older
    // one (by create index) is written last.
    h.state.commit((txn) => {
      txn.putEval({ ...template, id: 'resume-new', jobId: 'b', status: 'pending', createIndex: txn.index + 1000, modifyIndex: txn.index });
      txn.putEval({ ...template, id: 'resume-old', jobId: 'a', status: 'pending', createIndex: txn.index, modifyIndex: txn.index });
    });
    const order: string[] = [];
    const sub = h.state.events$.subscribe((e) => {
      if (e.topic === 'Evaluation') order.push(e.key);
    });
    try {
      h.core.resumeEvals();
      await h.core.broker.idle();
    } finally {
      sub.unsubscribe();
    }
    // Each pending one is processed once, the older first; the complete ones are not run again.
    expect(order.filter((k) => k.startsWith('resume-')).filter((k, i, all) => all.indexOf(k) === i)).to.deep.equal(['resume-old', 'resume-new']);
    expect(order.filter((k) => done.includes(k))).to.deep.equal([]);
    for (const id of ['resume-old', 'resume-new']) expect(h.state.evals.get(id)?.status).to.equal('complete');
  });

  it('an enforce-index refusal other than a conflict carries no current index; a job asking a dynamic port is placed with one', async () => {
    const h = half();
    h.core.register(await job(h, 'web'));
    const exists = thrown(() => h.core.register(h.state.jobs.get('web')!.apiJob, { enforceIndex: true })) as {
      kind: string;
      current?: number;
      message: string;
    };
    expect([exists.kind, exists.current]).to.deep.equal(['exists', undefined]);
    expect(exists.message).to.not.match(/\(at \d+\)/);
    const ported = await job(h, 'ported', {
      TaskGroups: [
        {
          Name: 'g',
          Count: 1,
          Networks: [{ DynamicPorts: [{ Label: 'http' }] }],
          Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '1h' }, Resources: { CPU: 10, MemoryMB: 10 } }],
        },
      ],
    });
    h.core.register(ported);
    const [a] = await running(h, 'ported', 1);
    const port = a!.alloc.allocatedResources?.shared.ports.find((p) => p.label === 'http');
    expect(port?.value).to.be.within(20000, 32000); // Nomad's default dynamic range
  });
});

describe('agent core: what each operation keeps and answers (real SQLite, real client)', function () {
  this.timeout(20_000);
  const half = useServerHalves();
  const hour = 3_600_000_000_000; // ns

  it("register keeps the first CreateIndex across versions, stamps Status pending and SubmitTime in ns, joins the caller's warnings; its eval is job-register", async () => {
    const h = half();
    const before = Date.now();
    const first = h.core.register(await job(h, 'web'));
    const second = h.core.register(await job(h, 'web', {}, 2), { warnings: ['Berth ignores X'] });
    const rec = h.state.jobs.get('web')!;
    expect([rec.createIndex, rec.apiJob.CreateIndex, rec.apiJob.ModifyIndex, rec.apiJob.JobModifyIndex]).to.deep.equal([
      first.index,
      first.index,
      second.index,
      second.index,
    ]);
    expect([rec.apiJob.Status, rec.apiJob.Stop, rec.apiJob.Version, rec.namespace]).to.deep.equal(['pending', false, 1, 'default']);
    expect(rec.apiJob.SubmitTime as number).to.be.within(before * 1e6, Date.now() * 1e6);
    expect(second.warnings).to.include('Berth ignores X');
    expect(h.state.evals.get(first.evalId)?.triggeredBy).to.equal('job-register');
  });

  it('validate answers the warnings register would give and writes nothing; a bad periodic block is refused as register refuses it', async () => {
    const h = half();
    const index = h.state.waiters.index;
    expect(h.core.validate(await job(h, 'web'), ['Berth ignores X'])).to.include('Berth ignores X');
    expect(h.core.validate(await job(h, 'web'))).to.equal('');
    const bad = { ...(await job(h, 'cron', { Type: 'batch' })), Periodic: { Enabled: true, Spec: 'not a cron', SpecType: 'cron' } };
    expect(thrown(() => h.core.validate(bad))).to.be.instanceOf(InvalidPeriodicError);
    expect(h.state.waiters.index).to.equal(index);
    expect(h.state.jobs.size).to.equal(0);
  });

  it("scale changes only the named group's count, with a job-scaling eval", async () => {
    const h = half();
    const two = await job(h, 'web');
    const groups = two.TaskGroups as Array<Record<string, unknown>>;
    two.TaskGroups = [groups[0], { ...groups[0], Name: 'h' }];
    h.core.register(two);
    const r = h.core.scale('web', 'h', 3);
    const counts = (h.state.jobs.get('web')!.apiJob.TaskGroups as Array<{ Name: string; Count: number }>).map((g) => [g.Name, g.Count]);
    expect(counts).to.deep.equal([
      ['g', 1],
      ['h', 3],
    ]);
    expect(h.state.evals.get(r.evalId)?.triggeredBy).to.equal('job-scaling');
    expect(thrown(() => h.core.scale('web', 'x', 1))).to.have.property('group', 'x');
  });

  it('setPreemption without cas always commits; an unknown eval is refused and a known one answered', async () => {
    const h = half();
    const r = h.core.setPreemption({ batchSchedulerEnabled: true });
    expect(r.updated).to.equal(true);
    expect(h.state.schedulerConfig!.preemption.batchSchedulerEnabled).to.equal(true);
    const reg = h.core.register(await job(h, 'web'));
    expect(h.core.evaluation(reg.evalId).id).to.equal(reg.evalId);
  });

  it('a periodic job arms the launch timer when registered and disarms it when stopped; overlap is refused while a child lives; a second force in the same second is refused', async () => {
    const clock = new ManualClock();
    const h = half({ periodicClock: clock });
    h.core.periodic.start();
    h.core.register(await job(h, 'cron', { Type: 'batch', Periodic: { Enabled: true, Spec: '* * * * *', SpecType: 'cron', ProhibitOverlap: true } }));
    expect(clock.pending).to.equal(1);
    clock.advance(60_000);
    const children = () => [...h.state.jobs.values()].filter((j) => j.apiJob.ParentID === 'cron');
    expect(children()).to.have.length(1);
    clock.advance(60_000); // the child still runs: this launch is skipped
    expect(children()).to.have.length(1);
    expect(h.log.some((l) => l.includes('prohibit_overlap'))).to.equal(true);
    h.core.forcePeriodic('cron');
    expect(thrown(() => h.core.forcePeriodic('cron')))
      .to.be.instanceOf(PeriodicLaunchExistsError)
      .and.include({ jobId: 'cron' });
    expect(thrown(() => h.core.forcePeriodic('nope'))).to.be.instanceOf(JobNotFoundError);
    h.core.deregister('cron', false);
    expect(clock.pending).to.equal(0);
    expect(h.state.evals.get([...h.state.evals.values()].find((e) => e.jobId === 'cron' && e.triggeredBy === 'job-deregister')!.id)?.type).to.equal('batch');
  });

  it('a dispatch without a token is a new child each time, and an answered one carries no warnings', async () => {
    const h = half();
    h.core.register(await job(h, 'batch', { Type: 'batch', ParameterizedJob: { Payload: 'optional' } }));
    const a = h.core.dispatch('batch', {});
    const b = h.core.dispatch('batch', {});
    expect(a.dispatchedJobId).to.not.equal(b.dispatchedJobId);
    h.core.dispatch('batch', { idempotencyToken: 't' });
    expect(h.core.dispatch('batch', { idempotencyToken: 't' }).warnings).to.equal('');
  });

  it('purge forgets only its own job’s deployments', async () => {
    const h = half();
    for (const id of ['web', 'other']) {
      h.core.register(await job(h, id, { Update: { MaxParallel: 1 } }));
      await running(h, id, 1);
    }
    h.core.deregister('web', true);
    expect([...h.state.deployments.values()].filter((d) => d.jobId === 'other')).to.not.have.length(0);
  });

  it('a capacity freed by an alloc that ends unblocks a blocked evaluation', async () => {
    const h = half();
    const big = (id: string) =>
      job(h, id, {
        TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '1h' }, Resources: { CPU: 3000, MemoryMB: 10 } }] }],
      });
    h.core.register(await big('a'));
    const [a] = await running(h, 'a', 1);
    h.core.register(await big('b'));
    await h.core.broker.idle();
    expect(allocsOf(h, 'b')).to.have.length(0);
    expect([...h.state.evals.values()].some((e) => e.jobId === 'b' && e.status === 'blocked')).to.equal(true);
    h.core.clientUpdate({ ...a!.alloc, clientStatus: 'complete' });
    await running(h, 'b', 1);
  });

  it("a rollout goes on batch by batch: each health verdict's eval places the next", async () => {
    const h = half();
    const update = { Update: { MaxParallel: 1, MinHealthyTime: 1_000_000, HealthyDeadline: hour, ProgressDeadline: 2 * hour } };
    h.core.register(await job(h, 'web', update, 2));
    await running(h, 'web', 2);
    h.core.register(await job(h, 'web', { ...update, Meta: { v: '2' } }, 2));
    const done = () => [...h.state.deployments.values()].some((d) => d.jobId === 'web' && d.jobVersion === 1 && d.status === 'successful');
    await h.core.broker.idle();
    if (!done()) await firstValueFrom(h.state.events$.pipe(filter(done)));
    expect(allocsOf(h, 'web').filter((s) => s.alloc.desiredStatus === 'run' && s.alloc.job.version === 1)).to.have.length(2);
  });

  it('pause never rolls back; a fail from paused with auto_revert does', async () => {
    const h = half();
    const d = await revertableRollout(h);
    const p = h.core.deploymentAction(d.id, 'pause');
    expect(p.revertedJobVersion).to.equal(undefined);
    expect(h.state.jobs.get('web')?.version).to.equal(1);
    expect(h.state.deployments.get(d.id)?.statusDescription).to.equal('Deployment is paused');
    const f = h.core.deploymentAction(d.id, 'fail');
    expect(f.revertedJobVersion).to.equal(0);
    expect(h.state.jobs.get('web')?.version).to.equal(2);
  });

  it('promote, with no groups named, promotes every group and its eval is processed', async () => {
    const h = half();
    const update = { Update: { MaxParallel: 1, Canary: 1, MinHealthyTime: 1_000_000, HealthyDeadline: hour, ProgressDeadline: 2 * hour } };
    h.core.register(await job(h, 'web', update));
    await running(h, 'web', 1);
    h.core.register(await job(h, 'web', { ...update, Meta: { v: '2' } }));
    await h.core.broker.idle();
    const d = [...h.state.deployments.values()].find((x) => x.jobId === 'web' && x.jobVersion === 1)!;
    const healthy = () => h.state.deployments.get(d.id)!.taskGroups.g!.healthyAllocs >= 1;
    if (!healthy()) await firstValueFrom(h.state.events$.pipe(filter(healthy)));
    const r = h.core.deploymentAction(d.id, 'promote');
    expect(h.state.deployments.get(d.id)!.taskGroups.g!.promoted).to.equal(true);
    await h.core.broker.idle();
    expect(h.state.evals.get(r.evalId!)?.status).to.equal('complete');
  });

  it('after stop, a client report is committed at once, not queued', async () => {
    const h = half();
    h.core.register(await job(h, 'web'));
    const [a] = await running(h, 'web', 1);
    await h.core.stop();
    const index = h.state.waiters.index;
    h.core.queueClientUpdate({ ...a!.alloc, clientDescription: 'after stop' });
    expect(h.state.waiters.index).to.equal(index + 1);
    expect(h.state.allocs.get(a!.alloc.id)?.alloc.clientDescription).to.equal('after stop');
  });

  it('stopAlloc of an alloc the client does not hold still commits the stop, and logs why the client could not take it', async () => {
    const h = half();
    h.core.register(await job(h, 'web'));
    const [a] = await running(h, 'web', 1);
    const ghost = { ...a!, alloc: { ...a!.alloc, id: '00000000-0000-4000-8000-00000000dead', name: 'web.g[9]' } };
    h.state.commit((txn) => txn.putAlloc({ ...ghost, createIndex: txn.index, modifyIndex: txn.index }));
    h.core.stopAlloc(ghost.alloc.id);
    expect(h.state.allocs.get(ghost.alloc.id)?.alloc.desiredStatus).to.equal('stop');
    expect(h.log.filter((l) => l.startsWith('alloc stop: '))).to.have.length(1);
  });
});
