/** A dispatch's idempotency token: the live child that already carries it (pure). */
import { expect } from 'chai';
import { sameDispatch } from '../../../agent/jobs/dispatch.ts';
import type { ApiJob } from '../../../agent/state/types.ts';

const job = (ID: string, apiJob: Partial<ApiJob>, live = true) => ({ id: ID, live, apiJob: { ID, ...apiJob } });

describe('agent: dispatch idempotency (pure)', () => {
  const jobs = [
    job('batch', {}),
    job('batch/dispatch-1-aaaa', { ParentID: 'batch', DispatchIdempotencyToken: 'old' }, false),
    job('batch/dispatch-2-bbbb', { ParentID: 'batch', DispatchIdempotencyToken: 'tok' }),
    job('other/dispatch-3-cccc', { ParentID: 'other', DispatchIdempotencyToken: 'elsewhere' }),
    job('batch/dispatch-4-dddd', { ParentID: 'batch' }),
  ];
  const live = (j: { live: boolean }) => j.live;

  it('answers the live child of the same parent with the same token', () => {
    expect(sameDispatch(jobs, 'batch', 'tok', live)?.id).to.equal('batch/dispatch-2-bbbb');
  });

  it("a dead child's token is free again; another parent's child or another token is not the same dispatch", () => {
    expect(sameDispatch(jobs, 'batch', 'old', live)).to.equal(undefined);
    expect(sameDispatch(jobs, 'batch', 'elsewhere', live)).to.equal(undefined);
    expect(sameDispatch(jobs, 'other', 'tok', live)).to.equal(undefined);
    expect(sameDispatch(jobs, 'batch', 'nope', live)).to.equal(undefined);
    // The same token, live once more: found again.
    expect(sameDispatch(jobs, 'batch', 'old', () => true)?.id).to.equal('batch/dispatch-1-aaaa');
  });
});
