/** Dispatching a parameterized job (pure): the request's check, the child, the idempotency token's live child. */
import { expect } from 'chai';
import {
  checkDispatch,
  DISPATCH_PAYLOAD_LIMIT,
  dispatchedChild,
  DispatchError,
  isParentJob,
  parameterizedOf,
  sameDispatch,
  type DispatchRequest,
} from '../../../agent/jobs/dispatch.ts';
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

describe('agent: a dispatch request against its parent (pure)', () => {
  const parent = (ParameterizedJob: unknown, over: Partial<ApiJob> = {}): ApiJob => ({ ID: 'batch', Name: 'batch', ParameterizedJob, ...over });
  const refusal = (p: ApiJob, req: DispatchRequest): string | undefined => {
    try {
      checkDispatch(p, req);
      return undefined;
    } catch (e) {
      expect(e).to.be.instanceOf(DispatchError);
      return (e as Error).message;
    }
  };

  it('a job with no parameterized block, or a dispatched child, is not a parent', () => {
    expect(refusal({ ID: 'web' }, {})).to.equal('Specified job "web" is not a parameterized job');
    expect(refusal({ ID: 'web', ParameterizedJob: null }, {})).to.equal('Specified job "web" is not a parameterized job');
    expect(refusal(parent({}, { ID: 'batch/dispatch-1-a', Dispatched: true }), {})).to.equal('Specified job "batch/dispatch-1-a" is not a parameterized job');
    expect(parameterizedOf(parent({ Payload: 'required' }))).to.deep.equal({ Payload: 'required' });
  });

  it("the payload rule: optional by default, forbidden, required, at most 16 KiB, in Nomad's words", () => {
    const one = Buffer.from('x');
    expect(refusal(parent({}), {})).to.equal(undefined);
    expect(refusal(parent({}), { payload: one })).to.equal(undefined);
    expect(refusal(parent({ Payload: 'forbidden' }), { payload: one })).to.equal('Payload provided but forbidden by parameterized job');
    expect(refusal(parent({ Payload: 'forbidden' }), { payload: Buffer.alloc(0) })).to.equal(undefined);
    expect(refusal(parent({ Payload: 'required' }), {})).to.equal('Payload is not provided but required by parameterized job');
    expect(refusal(parent({ Payload: 'required' }), { payload: one })).to.equal(undefined);
    expect(DISPATCH_PAYLOAD_LIMIT).to.equal(16384);
    expect(refusal(parent({}), { payload: Buffer.alloc(16384) })).to.equal(undefined);
    expect(refusal(parent({}), { payload: Buffer.alloc(16385) })).to.equal('Payload exceeds maximum size; 16385 > 16384');
  });

  it('meta keys: each given key must be required or optional, each required one given; both lists sorted', () => {
    const p = parent({ MetaRequired: ['z', 'a'], MetaOptional: ['opt'] });
    expect(refusal(p, { meta: { a: '1', z: '2' } })).to.equal(undefined);
    expect(refusal(p, { meta: { a: '1', z: '2', opt: '3' } })).to.equal(undefined);
    expect(refusal(p, { meta: { a: '1', z: '2', y: '3', b: '4' } })).to.equal('Dispatch provided unpermitted meta keys: [b y]');
    expect(refusal(p, {})).to.equal('Dispatch did not provide required meta keys: [a z]');
    expect(refusal(p, { meta: { opt: '1' } })).to.equal('Dispatch did not provide required meta keys: [a z]');
    expect(refusal(parent({ MetaRequired: null, MetaOptional: null }), { meta: { k: 'v' } })).to.equal('Dispatch provided unpermitted meta keys: [k]');
  });

  it('the child: named <parent>/dispatch-<unix seconds>-<8 hex>, the payload and merged meta, no parameterized block or server fields', () => {
    const p = parent(
      { Payload: 'optional' },
      {
        Meta: { team: 'a', env: 'x' },
        Version: 3,
        Status: 'running',
        SubmitTime: 1,
        CreateIndex: 2,
        ModifyIndex: 3,
        JobModifyIndex: 4,
        Stable: true,
        Stop: false,
        Priority: 70,
      },
    );
    const child = dispatchedChild(p, { payload: Buffer.from('hi'), meta: { env: 'y' }, idempotencyToken: 'tok' }, 1_700_000_123_456);
    expect(child.ID).to.match(/^batch\/dispatch-1700000123-[0-9a-f]{8}$/);
    expect(child).to.deep.equal({
      ID: child.ID,
      Name: child.ID,
      ParentID: 'batch',
      Dispatched: true,
      Meta: { team: 'a', env: 'y' },
      Payload: Buffer.from('hi').toString('base64'),
      DispatchIdempotencyToken: 'tok',
      Priority: 70,
    });
    // The parent is left as it was.
    expect(p.ParameterizedJob).to.deep.equal({ Payload: 'optional' });
    // No payload, no token, no meta anywhere: none of them is set.
    const bare = dispatchedChild(parent({}), {}, 0);
    expect(bare).to.deep.equal({ ID: bare.ID, Name: bare.ID, ParentID: 'batch', Dispatched: true, Meta: {} });
    expect(dispatchedChild(parent({}), { payload: Buffer.alloc(0) }, 0)).to.not.have.property('Payload');
    // Two dispatches in the same second are two children.
    expect(dispatchedChild(p, {}, 0).ID).to.not.equal(dispatchedChild(p, {}, 0).ID);
  });

  it('a parent is a parameterized job not dispatched, or a periodic job that is not a child', () => {
    expect(isParentJob({ parameterized: {} })).to.equal(true);
    expect(isParentJob({ parameterized: {}, dispatched: true })).to.equal(false);
    expect(isParentJob({ periodic: {} })).to.equal(true);
    expect(isParentJob({ periodic: {}, parentId: 'p' })).to.equal(false);
    expect(isParentJob({})).to.equal(false);
  });
});
