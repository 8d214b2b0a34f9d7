// Nomad's evaluations on one node: what a new eval carries, the blocked evals retried oldest
// first (ties by id), and one blocked eval kept per job (in its namespace).
import { expect } from 'chai';
import { blockedEvalsToRetry, newEvaluation, type Evaluation } from '../../../agent/scheduler/index.ts';
import { supersededBlockedEvals } from '../../../agent/scheduler/evaluations.ts';

const ev = (id: string, over: Partial<Evaluation> = {}): Evaluation => ({
  id,
  namespace: 'default',
  priority: 50,
  type: 'service',
  triggeredBy: 'job-register',
  jobId: 'web',
  status: 'blocked',
  createTime: 10,
  modifyTime: 10,
  ...over,
});

describe('scheduler: evaluation rules', () => {
  it('a node-update eval names its node; a job without a version gives none', () => {
    expect(newEvaluation({ id: 'e1', job: { id: 'web', type: 'service' }, triggeredBy: 'node-update', now: 5, nodeId: 'node-1' })).to.deep.equal({
      id: 'e1',
      namespace: 'default',
      priority: 50,
      type: 'service',
      triggeredBy: 'node-update',
      jobId: 'web',
      status: 'pending',
      createTime: 5,
      modifyTime: 5,
      nodeId: 'node-1',
    });
  });

  it('blocked evals retried oldest first, ties by id; others left', () => {
    const evals = [ev('c', { createTime: 20 }), ev('b'), ev('a'), ev('p', { status: 'pending', createTime: 1 }), ev('z', { createTime: 5 })];
    expect(blockedEvalsToRetry(evals).map((e) => e.id)).to.deep.equal(['z', 'a', 'b', 'c']);
  });

  it('ties by id whichever comes first', () => {
    expect(blockedEvalsToRetry([ev('a'), ev('b')]).map((e) => e.id)).to.deep.equal(['a', 'b']);
  });

  it('one blocked eval per job: the older ones of the same job and namespace are canceled', () => {
    const mine = ev('new', { createTime: 30 });
    const evals = [
      ev('old'),
      ev('other-job', { jobId: 'api' }),
      ev('other-ns', { namespace: 'prod' }),
      ev('pending', { status: 'pending' }),
      ev('no-ns', { namespace: undefined }),
      mine,
    ];
    expect(supersededBlockedEvals(evals, mine, 40)).to.deep.equal([
      { ...ev('old'), status: 'canceled', statusDescription: 'existing blocked evaluation exists for job "web"', modifyTime: 40 },
      { ...ev('no-ns', { namespace: undefined }), status: 'canceled', statusDescription: 'existing blocked evaluation exists for job "web"', modifyTime: 40 },
    ]);
  });
});
