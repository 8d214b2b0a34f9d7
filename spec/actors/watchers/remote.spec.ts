import { expect } from 'chai';
import { finalRemoteError, watchRemoteAlloc } from '../../../actors/watchers/remote.ts';
import { PermissionDeniedError, UnknownAllocationError } from '../../../model/errors.ts';
import { FakeRPC, ManualClock, UUID_LENGTH_ERROR, makeAlloc } from '../../support/fake-rpc.ts';

const fast = { baseMs: 1, staggerMs: 0 };
const tick = () => new Promise<void>((r) => setImmediate(r));

describe('actors/watchers/remote: watchRemoteAlloc', () => {
  it('makes a consistent read first, then blocking queries at the last index', async () => {
    const rpc = new FakeRPC();
    const prev = makeAlloc({ nodeId: 'node-a' });
    const i1 = rpc.upsert(prev);
    const p = watchRemoteAlloc(prev.id, { rpc, signal: new AbortController().signal, retry: fast });
    await rpc.waitForRequests(2);
    const i2 = rpc.upsert({ ...prev, clientStatus: 'running', desiredStatus: 'stop' });
    await rpc.waitForRequests(3);
    rpc.upsert({ ...prev, clientStatus: 'complete' });
    expect(await p).to.deep.equal({ reason: 'terminated', clientStatus: 'complete', nodeId: 'node-a' });
    expect(rpc.requests.map(({ allocId, minQueryIndex, allowStale }) => ({ allocId, minQueryIndex, allowStale }))).to.deep.equal([
      { allocId: prev.id, minQueryIndex: 0, allowStale: false },
      { allocId: prev.id, minQueryIndex: i1, allowStale: true },
      { allocId: prev.id, minQueryIndex: i2, allowStale: true },
    ]);
  });

  it('is done when the alloc was garbage collected (null), without a node id', async () => {
    const rpc = new FakeRPC();
    const prev = makeAlloc();
    rpc.upsert(prev);
    const p = watchRemoteAlloc(prev.id, { rpc, signal: new AbortController().signal, retry: fast });
    await rpc.waitForRequests(2);
    rpc.gc(prev.id);
    expect(await p).to.deep.equal({ reason: 'garbage-collected' });
  });

  it('is done on client status unknown, recording the node id', async () => {
    const rpc = new FakeRPC();
    const prev = makeAlloc({ clientStatus: 'unknown', nodeId: 'node-u' });
    rpc.upsert(prev);
    const out = await watchRemoteAlloc(prev.id, { rpc, signal: new AbortController().signal, retry: fast });
    expect(out).to.deep.equal({ reason: 'unknown-status', clientStatus: 'unknown', nodeId: 'node-u' });
  });

  for (const [name, error, reason] of [
    ['UnknownAllocationError', new UnknownAllocationError('Unknown allocation "x"'), 'unknown-allocation'],
    ['PermissionDeniedError', new PermissionDeniedError('Permission denied'), 'permission-denied'],
    ['a plain Error saying "Unknown allocation" (over HTTP)', new Error('rpc error: Unknown allocation'), 'unknown-allocation'],
    ['a plain Error saying "Permission denied" (over HTTP)', new Error('403: Permission denied'), 'permission-denied'],
  ] as const) {
    it(`stops waiting on ${name}, with no node id and no retry`, async () => {
      const rpc = new FakeRPC();
      const prev = makeAlloc();
      rpc.upsert(prev);
      rpc.failNext(prev.id, error);
      const retries: number[] = [];
      const out = await watchRemoteAlloc(prev.id, { rpc, signal: new AbortController().signal, retry: fast, onRetry: (_e, d) => retries.push(d) });
      expect(out).to.deep.equal({ reason });
      expect(rpc.requests).to.have.length(1);
      expect(retries).to.deep.equal([]);
    });
  }

  it('classifies final errors by class and by message', () => {
    expect(finalRemoteError(new UnknownAllocationError('x'))).to.equal('unknown-allocation');
    expect(finalRemoteError(new PermissionDeniedError('x'))).to.equal('permission-denied');
    expect(finalRemoteError('Permission denied')).to.equal('permission-denied');
    expect(finalRemoteError(new Error(UUID_LENGTH_ERROR))).to.equal(undefined);
    expect(finalRemoteError(new Error('connection refused'))).to.equal(undefined);
  });

  it('retries other errors after base + random() * stagger, then succeeds', async () => {
    const rpc = new FakeRPC();
    const prev = makeAlloc({ clientStatus: 'failed', nodeId: 'node-f' });
    rpc.upsert(prev);
    rpc.failNext(prev.id, new Error('rpc error: No cluster leader'), 2);
    const retries: [string, number][] = [];
    const out = await watchRemoteAlloc(prev.id, {
      rpc,
      signal: new AbortController().signal,
      retry: { baseMs: 2, staggerMs: 4 },
      random: () => 0.5,
      onRetry: (e, d) => retries.push([e, d]),
    });
    expect(out).to.deep.equal({ reason: 'terminated', clientStatus: 'failed', nodeId: 'node-f' });
    expect(retries).to.deep.equal([
      ['rpc error: No cluster leader', 4],
      ['rpc error: No cluster leader', 4],
    ]);
    expect(rpc.requests.map((r) => r.allowStale)).to.deep.equal([false, false, false]);
  });

  it('waits 30 s + uniform [0, 30 s) by default, on the injected clock, before retrying', async () => {
    const rpc = new FakeRPC();
    const prev = makeAlloc({ clientStatus: 'complete' });
    rpc.upsert(prev);
    rpc.failNext(prev.id, new Error('timeout'));
    const clock = new ManualClock();
    const p = watchRemoteAlloc(prev.id, { rpc, signal: new AbortController().signal, clock, random: () => 0.25 });
    await clock.waitForScheduled(1);
    expect(clock.scheduled).to.deep.equal([37_500]);
    clock.advance(37_499);
    await tick();
    expect(rpc.requests).to.have.length(1);
    clock.advance(1);
    expect(await p).to.deep.include({ reason: 'terminated' });
    expect(rpc.requests).to.have.length(2);
  });

  it('discards a stale response (index below minQueryIndex), waits, and asks again', async () => {
    const rpc = new FakeRPC();
    const prev = makeAlloc();
    const i1 = rpc.upsert(prev);
    // The stale answers claim the alloc is complete: acting on them would release too early.
    rpc.staleNext(prev.id, 2, { ...prev, clientStatus: 'complete' });
    const retries: string[] = [];
    let settled = false;
    const p = watchRemoteAlloc(prev.id, { rpc, signal: new AbortController().signal, retry: fast, onRetry: (e) => retries.push(e) }).then(
      (o) => ((settled = true), o),
    );
    await rpc.waitForRequests(4); // consistent read, 2 stale, then a real blocking query
    await tick();
    expect(settled).to.equal(false);
    expect(retries).to.have.length(2);
    expect(retries[0]).to.match(/stale/);
    expect(rpc.requests.slice(1).map((r) => [r.allowStale, r.minQueryIndex])).to.deep.equal([
      [true, i1],
      [true, i1],
      [true, i1],
    ]);
    rpc.upsert({ ...prev, clientStatus: 'lost' });
    expect(await p).to.deep.include({ reason: 'terminated', clientStatus: 'lost' });
  });

  it('aborts the in-flight request and rejects at once when the signal aborts', async () => {
    const rpc = new FakeRPC();
    const prev = makeAlloc();
    rpc.upsert(prev);
    const ac = new AbortController();
    const p = watchRemoteAlloc(prev.id, { rpc, signal: ac.signal, retry: fast });
    await rpc.waitForRequests(2);
    await tick();
    expect(rpc.blocked).to.equal(1);
    ac.abort(new Error('stopped'));
    const err = await p.then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.equal('stopped');
    expect(rpc.signals[1]!.aborted).to.equal(true);
    expect(rpc.requests[1]!.outcome).to.equal('aborted');
    expect(rpc.blocked).to.equal(0);
  });

  it('clears its retry timer when aborted during the back-off', async () => {
    const rpc = new FakeRPC();
    const prev = makeAlloc();
    rpc.upsert(prev);
    rpc.failNext(prev.id, new Error('boom'));
    const clock = new ManualClock();
    const ac = new AbortController();
    const p = watchRemoteAlloc(prev.id, { rpc, signal: ac.signal, clock });
    await clock.waitForScheduled(1);
    expect(clock.pending).to.equal(1);
    ac.abort(new Error('stopped'));
    await p.then(
      () => expect.fail('should reject'),
      () => undefined,
    );
    expect(clock.pending).to.equal(0);
    expect(rpc.requests).to.have.length(1);
  });
});
