import { expect } from 'chai';
import { blockedEvalsToRetry, isReady, newEvaluation, type Evaluation } from '../../../agent/scheduler/index.ts';
import { job, World } from './support.ts';

describe('scheduler: evaluations', () => {
  it('a new eval carries the job’s id, type, priority and version, pending', () => {
    const ev = newEvaluation({ id: 'e1', job: job('web', { priority: 70, version: 3, type: 'batch' }), triggeredBy: 'job-register', now: 5 });
    expect(ev).to.deep.equal({
      id: 'e1',
      namespace: 'default',
      priority: 70,
      type: 'batch',
      triggeredBy: 'job-register',
      jobId: 'web',
      jobVersion: 3,
      status: 'pending',
      createTime: 5,
      modifyTime: 5,
    });
  });

  const cases: Array<{ name: string; ev: Partial<Evaluation>; now: number; ready: boolean }> = [
    { name: 'pending', ev: {}, now: 0, ready: true },
    { name: 'pending, waitUntil ahead', ev: { waitUntil: 10 }, now: 9, ready: false },
    { name: 'pending, waitUntil reached', ev: { waitUntil: 10 }, now: 10, ready: true },
    { name: 'blocked', ev: { status: 'blocked' }, now: 0, ready: false },
    { name: 'complete', ev: { status: 'complete' }, now: 0, ready: false },
  ];
  for (const c of cases) {
    it(`isReady: ${c.name} → ${c.ready}`, () => {
      const ev = { ...newEvaluation({ id: 'e', job: job('x'), triggeredBy: 'alloc-reschedule', now: 0 }), ...c.ev };
      expect(isReady(ev, c.now)).to.equal(c.ready);
    });
  }

  it('blocked evals are retried oldest first', () => {
    const mk = (id: string, createTime: number, status: Evaluation['status']) => ({
      ...newEvaluation({ id, job: job(id), triggeredBy: 'queued-allocs', now: createTime }),
      status,
    });
    const order = blockedEvalsToRetry([mk('c', 3, 'blocked'), mk('a', 1, 'blocked'), mk('x', 0, 'complete'), mk('b', 2, 'blocked')]).map((e) => e.id);
    expect(order).to.deep.equal(['a', 'b', 'c']);
  });

  it('the eval of a purged job stops its allocs and completes; queued counts are per group', () => {
    const w = new World();
    w.register(job('web', { count: 2 }));
    w.jobs = [];
    const plan = w.evaluate('web', 'job-deregister');
    expect(plan.stop).to.have.length(2);
    expect(plan.eval).to.include({ status: 'complete', jobId: 'web', triggeredBy: 'job-deregister' });
    expect(plan.evals).to.deep.equal([]);
  });

  it('an eval for a job with nothing to do completes with nothing in the plan', () => {
    const w = new World();
    w.register(job('web'));
    const plan = w.evaluate('web', 'node-update');
    expect([plan.place, plan.stop, plan.preempt, plan.inPlace, plan.evals]).to.deep.equal([[], [], [], [], []]);
    expect(plan.eval.status).to.equal('complete');
    expect(plan.eval.queuedAllocations).to.deep.equal({ g: 0 });
  });
});
