/**
 * The agent's operations (`agent/core.ts`) at their own path, without HTTP: on a real SQLite
 * state in a temp dir and a real in-process client. What they commit survives a reopen, a job's
 * version follows its spec, and each refusal is a named domain error carrying its facts (the
 * HTTP edge's table turns those into Nomad's texts: spec/agent/http-errors.spec.ts).
 */
import { expect } from 'chai';
import { firstValueFrom, filter } from 'rxjs';
import { AgentState } from '../../agent/state/store.ts';
import {
  AllocationNotFoundError,
  DeploymentNotFoundError,
  EnforceIndexError,
  EvalNotFoundError,
  InvalidJobError,
  InvalidPeriodicError,
  JobNotFoundError,
  JobNotPeriodicError,
  ScaleGroupNotFoundError,
} from '../../agent/errors.ts';
import type { ApiJob } from '../../agent/state/types.ts';
import { mockServiceJob, useServerHalves, type ServerHalf } from '../support/server-half.ts';
import { thrown } from '../support/thrown.ts';
import { ManualClock } from '../support/fake-rpc.ts';

/** A service job of `count` mock tasks that run until stopped, through the agent's jobspec canonicalisation. */
const serviceJob = (half: ServerHalf, id: string, over: { count?: number; runFor?: string } = {}): Promise<ApiJob> => mockServiceJob(half, id, over);

describe('agent core (real SQLite, real client)', function () {
  this.timeout(20_000);
  const half = useServerHalves();

  it('register commits the job and its eval; the broker places it; the client runs it; all of it is there after a reopen', async () => {
    const h = half();
    const running = firstValueFrom(h.client.updates$.pipe(filter((a) => a.jobId === 'web' && a.clientStatus === 'running')));
    const r = h.core.register(await serviceJob(h, 'web'));
    expect(r.evalId).to.be.a('string').and.not.equal('');
    expect(h.state.jobs.get('web')?.version).to.equal(0);
    await h.core.broker.idle();
    const allocs = [...h.state.allocs.values()].filter((s) => s.alloc.jobId === 'web');
    expect(allocs).to.have.length(1);
    expect(h.state.evals.get(r.evalId)?.status).to.equal('complete');
    const live = await running;
    expect(live.id).to.equal(allocs[0]!.alloc.id);
    // The core takes the client's report in with the next paced commit (at most 50 ms later).
    const serverRunning = () => h.state.allocs.get(live.id)?.alloc.clientStatus === 'running';
    const committed = firstValueFrom(h.state.events$.pipe(filter(serverRunning)));
    if (!serverRunning()) await committed;
    expect(h.state.allocs.get(live.id)?.alloc.clientStatus).to.equal('running');

    await h.close();
    const again = new AgentState(h.statePath);
    try {
      expect(again.jobs.get('web')?.jobModifyIndex).to.equal(r.jobModifyIndex);
      expect(again.evals.get(r.evalId)?.status).to.equal('complete');
      expect(again.allocs.get(live.id)?.alloc.clientStatus).to.equal('running');
      expect(again.schedulerConfig?.preemption).to.deep.equal(h.core.config.preemption);
      expect(again.node?.id).to.equal(h.state.node?.id);
    } finally {
      again.close();
    }
  });

  it('the same spec again keeps the version; a changed spec, or one registered over a stopped job, is the next', async () => {
    const h = half();
    h.core.register(await serviceJob(h, 'web'));
    h.core.register(await serviceJob(h, 'web'));
    expect(h.state.jobs.get('web')?.version).to.equal(0);
    h.core.register(await serviceJob(h, 'web', { count: 2 }));
    expect(h.state.jobs.get('web')?.version).to.equal(1);
    h.core.deregister('web', false);
    h.core.register(await serviceJob(h, 'web', { count: 2 }));
    expect(h.state.jobs.get('web')?.version).to.equal(2);
    // A scale writes the group's count into a new version, with the server's fields set anew.
    h.core.scale('web', 'g', 3);
    const rec = h.state.jobs.get('web')!;
    expect(rec.version).to.equal(3);
    expect(rec.apiJob.Version).to.equal(3);
    expect((rec.apiJob.TaskGroups as Array<{ Count: number }>)[0]!.Count).to.equal(3);
  });

  it('an enforce-index refusal is an EnforceIndexError with the index asked and the one the job has; nothing is written', async () => {
    const h = half();
    const job = await serviceJob(h, 'web');
    const missing = thrown(() => h.core.register(job, { enforceIndex: true, jobModifyIndex: 7 }));
    expect(missing).to.be.instanceOf(EnforceIndexError).and.include({ jobId: 'web', want: 7, kind: 'missing' });
    expect(h.state.jobs.has('web')).to.equal(false);
    const first = h.core.register(job, { enforceIndex: true, jobModifyIndex: 0 });
    const index = h.state.waiters.index;
    expect(thrown(() => h.core.register(job, { enforceIndex: true })))
      .to.be.instanceOf(EnforceIndexError)
      .and.include({ kind: 'exists', want: 0 });
    const conflict = thrown(() => h.core.register(job, { enforceIndex: true, jobModifyIndex: first.jobModifyIndex + 100 }));
    expect(conflict)
      .to.be.instanceOf(EnforceIndexError)
      .and.include({ kind: 'conflict', want: first.jobModifyIndex + 100, current: first.jobModifyIndex });
    expect(h.state.waiters.index).to.equal(index);
    expect(h.core.register(job, { enforceIndex: true, jobModifyIndex: first.jobModifyIndex }).jobModifyIndex).to.be.greaterThan(first.jobModifyIndex);
  });

  it("scale with a JobModifyIndex applies only at the job's index (Nomad's check-and-set); 0 is no check", async () => {
    const h = half();
    const first = h.core.register(await serviceJob(h, 'web'));
    const index = h.state.waiters.index;
    expect(thrown(() => h.core.scale('web', 'g', 3, first.jobModifyIndex + 5)))
      .to.be.instanceOf(EnforceIndexError)
      .and.include({ jobId: 'web', kind: 'conflict', want: first.jobModifyIndex + 5, current: first.jobModifyIndex });
    expect(h.state.waiters.index, 'nothing written').to.equal(index);
    expect(h.state.jobs.get('web')?.version).to.equal(0);
    const scaled = h.core.scale('web', 'g', 3, first.jobModifyIndex);
    expect(h.state.jobs.get('web')?.version).to.equal(1);
    h.core.scale('web', 'g', 2);
    expect(h.state.jobs.get('web')?.version).to.equal(2);
    expect(thrown(() => h.core.scale('web', 'g', 4, scaled.jobModifyIndex))).to.be.instanceOf(EnforceIndexError);
  });

  it('setPreemption with a stale cas changes nothing; a current one commits, and it is the setting after a reopen', async () => {
    const h = half();
    const at = h.state.schedulerConfig!.modifyIndex;
    expect(h.core.setPreemption({ serviceSchedulerEnabled: true }, at + 5)).to.deep.equal({ updated: false, index: at });
    expect(h.state.schedulerConfig!.preemption.serviceSchedulerEnabled).to.equal(false);
    const r = h.core.setPreemption({ serviceSchedulerEnabled: true, sysbatchSchedulerEnabled: true }, at);
    expect(r.updated).to.equal(true);
    await h.close();
    const again = new AgentState(h.statePath);
    try {
      expect(again.schedulerConfig).to.deep.include({ modifyIndex: r.index });
      expect(again.schedulerConfig!.preemption).to.deep.equal({ ...h.core.config.preemption, serviceSchedulerEnabled: true, sysbatchSchedulerEnabled: true });
    } finally {
      again.close();
    }
  });

  it("each operation's refusal is its named domain error, carrying what it refused", async () => {
    const h = half();
    expect(thrown(() => h.core.deregister('nope', false)))
      .to.be.instanceOf(JobNotFoundError)
      .and.include({ jobId: 'nope' });
    expect(thrown(() => h.core.evaluate('nope'))).to.be.instanceOf(JobNotFoundError);
    expect(thrown(() => h.core.scale('nope', 'g', 1))).to.be.instanceOf(JobNotFoundError);
    expect(thrown(() => h.core.dispatch('nope', {}))).to.be.instanceOf(JobNotFoundError);
    expect(thrown(() => h.core.stopAlloc('no-alloc')))
      .to.be.instanceOf(AllocationNotFoundError)
      .and.include({ allocId: 'no-alloc' });
    expect(thrown(() => h.core.evaluation('no-eval')))
      .to.be.instanceOf(EvalNotFoundError)
      .and.include({ evalId: 'no-eval' });
    expect(thrown(() => h.core.deploymentAction('no-dep', 'fail')))
      .to.be.instanceOf(DeploymentNotFoundError)
      .and.include({ deploymentId: 'no-dep' });
    h.core.register(await serviceJob(h, 'web'));
    expect(thrown(() => h.core.scale('web', 'other', 2)))
      .to.be.instanceOf(ScaleGroupNotFoundError)
      .and.include({ jobId: 'web', group: 'other' });
    expect(thrown(() => h.core.forcePeriodic('web')))
      .to.be.instanceOf(JobNotPeriodicError)
      .and.include({ jobId: 'web' });
    const badCron = { ...(await serviceJob(h, 'cron')), Type: 'batch', Periodic: { Enabled: true, Spec: 'not a cron', SpecType: 'cron' } };
    expect(thrown(() => h.core.register(badCron)))
      .to.be.instanceOf(InvalidPeriodicError)
      .and.have.property('reason')
      .that.matches(/^Invalid periodic job: /);
    const noDriver = { ...(await serviceJob(h, 'x')), TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't' }] }] };
    expect(thrown(() => h.core.register(noDriver))).to.be.instanceOf(InvalidJobError);
    expect(h.state.jobs.has('cron') || h.state.jobs.has('x')).to.equal(false);
  });

  it('client reports that arrive in one turn of the event loop land in one commit, the last report of each alloc counting (issue #40)', async () => {
    const h = half();
    const n = 20;
    const allRunning = () => [...h.state.allocs.values()].filter((s) => s.alloc.jobId === 'many' && s.alloc.clientStatus === 'running').length === n;
    const ready = firstValueFrom(h.state.events$.pipe(filter(allRunning)));
    h.core.register(await serviceJob(h, 'many', { count: n }));
    await h.core.broker.idle();
    if (!allRunning()) await ready;
    const allocs = [...h.state.allocs.values()].filter((s) => s.alloc.jobId === 'many').map((s) => s.alloc);
    const before = h.state.waiters.index;
    const seen: number[] = [];
    const sub = h.state.events$.subscribe((e) => seen.push(e.index));
    try {
      const committed = firstValueFrom(h.state.events$);
      for (const a of allocs) h.core.queueClientUpdate({ ...a, clientDescription: 'first' });
      for (const a of allocs) h.core.queueClientUpdate({ ...a, clientDescription: 'last' });
      expect(h.state.waiters.index).to.equal(before); // queued, not yet committed
      await committed;
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      sub.unsubscribe();
    }
    expect(h.state.waiters.index).to.equal(before + 1);
    expect(seen)
      .to.have.length(n)
      .and.to.satisfy((xs: number[]) => xs.every((i) => i === before + 1));
    for (const a of allocs) {
      const s = h.state.allocs.get(a.id)!;
      expect([s.alloc.clientDescription, s.modifyIndex]).to.deep.equal(['last', before + 1]);
    }
    await h.close();
    const again = new AgentState(h.statePath);
    try {
      for (const a of allocs) expect(again.allocs.get(a.id)?.alloc.clientDescription).to.equal('last');
    } finally {
      again.close();
    }
  });

  it('paces the commits of client reports: a lone one lands on the next turn, those that follow within the interval wait for it and land together', async () => {
    const clock = new ManualClock();
    const h = half({ syncClock: clock, clientSyncIntervalMs: 50 });
    const n = 3;
    const allRunning = () => [...h.state.allocs.values()].filter((s) => s.alloc.jobId === 'paced' && s.alloc.clientStatus === 'running').length === n;
    h.core.register(await serviceJob(h, 'paced', { count: n }));
    await h.core.broker.idle();
    while (!allRunning()) {
      clock.advance(50); // whatever the pacing holds
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    clock.advance(50); // a quiet spell: the next report is not held
    const allocs = [...h.state.allocs.values()].filter((s) => s.alloc.jobId === 'paced').map((s) => s.alloc);
    const before = h.state.waiters.index;
    const turn = () => new Promise((resolve) => setImmediate(resolve));

    h.core.queueClientUpdate({ ...allocs[0]!, clientDescription: 'lone' });
    await turn();
    expect(h.state.waiters.index).to.equal(before + 1);

    const timers = clock.scheduled.length;
    h.core.queueClientUpdate({ ...allocs[1]!, clientDescription: 'held' });
    await turn();
    h.core.queueClientUpdate({ ...allocs[2]!, clientDescription: 'held' });
    await turn();
    expect(h.state.waiters.index).to.equal(before + 1); // within the interval: held
    expect(clock.scheduled.slice(timers)).to.deep.equal([50]); // one timer for both
    clock.advance(49);
    expect(h.state.waiters.index).to.equal(before + 1);
    clock.advance(1);
    expect(h.state.waiters.index).to.equal(before + 2);
    expect([1, 2].map((i) => [h.state.allocs.get(allocs[i]!.id)!.alloc.clientDescription, h.state.allocs.get(allocs[i]!.id)!.modifyIndex])).to.deep.equal([
      ['held', before + 2],
      ['held', before + 2],
    ]);
    expect(clock.pending).to.equal(0);

    // Stopping commits what is held at once.
    h.core.queueClientUpdate({ ...allocs[0]!, clientDescription: 'at stop' });
    expect(clock.pending).to.equal(1);
    await h.close();
    expect(clock.pending).to.equal(0);
    const again = new AgentState(h.statePath);
    try {
      expect(again.allocs.get(allocs[0]!.id)?.alloc.clientDescription).to.equal('at stop');
    } finally {
      again.close();
    }
  });
});
