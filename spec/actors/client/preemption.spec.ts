import { expect } from 'chai';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import type { Allocation } from '../../../model/types.ts';
import { FakeRPC, UUID_LENGTH_ERROR } from '../../support/fake-rpc.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { nextMessage, record, useTempClients } from '../../support/temp-client.ts';
import { parentOf } from '../../../actors/watchers/detached-children.ts';

/** The seed's #10200 scenario: a low-priority job of count 3, a high-priority alloc preempting 2. */
function lowPriority(): Allocation[] {
  return [0, 1, 2].map(() => makeAlloc([mockTask('web', { run_for: '10s', kill_after: '10ms' })], { group: { count: 3 } }));
}
function preemptor(victims: string[], over: Partial<Allocation> = {}): Allocation {
  return makeAlloc([mockTask('web', { run_for: '10s' })], { preemptedAllocations: victims, ...over });
}

describe('client: waiting for previous and preempted allocations', () => {
  const newClient = useTempClients();

  it('the seed scenario, local: the preemptor starts only after both victims have stopped', async () => {
    const client = newClient();
    const lo = lowPriority();
    const loR = lo.map((a) => client.addAlloc(a));
    await Promise.all(loR.map((r) => r.waitFor('running')));
    const waiting = record(client, 'watcher.waiting');
    const hi = preemptor([lo[0]!.id, lo[1]!.id]);
    const hiR = client.addAlloc(hi);
    await hiR.waitFor('waiting-prev');
    expect(hiR.isWaiting()).to.equal(true);
    expect(waiting.items.map((m) => [m.watchedAllocId, m.role, m.mode])).to.have.deep.members([
      [lo[0]!.id, 'preempted', 'local'],
      [lo[1]!.id, 'preempted', 'local'],
    ]);

    const released = nextMessage(client, 'watcher.released', (m) => m.watchedAllocId === lo[0]!.id);
    client.updateAlloc({ ...lo[0]!, desiredStatus: 'evict', allocModifyIndex: 2 });
    await loR[0]!.waitFor('stopping');
    expect((await released).reason).to.equal('terminated');
    expect(hiR.state()).to.equal('waiting-prev'); // one victim still running

    client.updateAlloc({ ...lo[1]!, desiredStatus: 'evict', allocModifyIndex: 2 });
    await hiR.waitFor('running');
    expect(hiR.isWaiting()).to.equal(false);
    expect(loR[0]!.alloc().clientStatus).to.equal('complete');
    expect(loR[1]!.alloc().clientStatus).to.equal('complete');
    expect(loR[2]!.state()).to.equal('running'); // not preempted
  });

  it('the seed scenario, remote (#10200): victims gone from this client, the preemptor still starts', async () => {
    const rpc = new FakeRPC();
    const client = newClient({ rpc, retry: { baseMs: 1, staggerMs: 0 } });
    const lo = lowPriority();
    client.updates$.subscribe((a) => rpc.upsert(a)); // the client reports its view to the servers
    const loR = lo.map((a) => client.addAlloc(a));
    await Promise.all(loR.map((r) => r.waitFor('running')));
    // Both victims stop after the scheduling decision and are garbage-collected from this client.
    for (const i of [0, 1]) {
      client.updateAlloc({ ...lo[i]!, desiredStatus: 'evict', allocModifyIndex: 2 });
      await loR[i]!.waitFor('stopping');
      await client.destroyAlloc(lo[i]!.id);
    }
    // A preempting alloc has no previousAllocation: the old bug asked the servers for "".
    const hi = preemptor([lo[0]!.id, lo[1]!.id]);
    expect(hi.previousAllocation).to.equal(undefined);
    const hiR = client.addAlloc(hi);
    await hiR.waitFor('running');
    const asked = rpc.requests.map((r) => r.allocId);
    expect(asked).to.include.members([lo[0]!.id, lo[1]!.id]);
    expect(asked).to.not.include('');
    // The fake servers would have rejected "" — prove the trap is armed.
    let err: unknown;
    await rpc.getAlloc({ allocId: '', minQueryIndex: 0, allowStale: false }, new AbortController().signal).catch((e) => (err = e));
    expect((err as Error).message).to.equal(UUID_LENGTH_ERROR);
  });

  it('previous and preempted together: all awaited, each watched by its own id', async () => {
    const rpc = new FakeRPC();
    const client = newClient({ rpc, retry: { baseMs: 1, staggerMs: 0 } });
    const prev = client.addAlloc(makeAlloc([mockTask('web', { run_for: '10s' })]));
    await prev.waitFor('running');
    const remoteVictim = makeAlloc([mockTask('web')], { clientStatus: 'running', nodeId: 'node-2' });
    rpc.upsert(remoteVictim);
    const next = preemptor([remoteVictim.id], { previousAllocation: prev.allocId });
    const r = client.addAlloc(next);
    await r.waitFor('waiting-prev');
    const prevReleased = nextMessage(client, 'watcher.released', (m) => m.allocId === r.allocId && m.watchedAllocId === prev.allocId);
    client.updateAlloc({ ...prev.alloc(), desiredStatus: 'stop', allocModifyIndex: 5 });
    await prevReleased; // the local previous alloc is done and its watcher let go
    expect(r.state()).to.equal('waiting-prev'); // the remote victim still runs
    rpc.upsert({ ...remoteVictim, clientStatus: 'complete' });
    await r.waitFor('running');
    expect(rpc.requests.every((q) => q.allocId === remoteVictim.id)).to.equal(true);
  });

  it('stopping a waiting alloc cancels the wait at once', async () => {
    const client = newClient();
    const prev = client.addAlloc(makeAlloc([mockTask('web', { run_for: '10s' })]));
    await prev.waitFor('running');
    const a = makeAlloc([mockTask('web')], { previousAllocation: prev.allocId });
    const r = client.addAlloc(a);
    await r.waitFor('waiting-prev');
    client.updateAlloc({ ...a, desiredStatus: 'stop', allocModifyIndex: 2 });
    await r.waitFor('stopping');
    // The wait was cancelled, not waited out: the previous alloc still runs.
    expect(prev.state()).to.equal('running');
    expect(r.isWaiting()).to.equal(false);
    expect(r.alloc().clientStatus).to.equal('complete');
  });

  it('a destroy while waiting leaves the wait in the same step (the chart takes the event), then ends destroyed', async () => {
    const client = newClient();
    const prev = client.addAlloc(makeAlloc([mockTask('web', { run_for: '10s' })]));
    await prev.waitFor('running');
    const r = client.addAlloc(makeAlloc([mockTask('web')], { previousAllocation: prev.allocId }));
    await r.waitFor('waiting-prev');
    const destroyed = r.destroy();
    // xstate transitions synchronously on send: an ignored destroy would leave it waiting here.
    expect(r.state()).to.equal('stopping');
    expect(r.isWaiting()).to.equal(false);
    await destroyed;
    expect(r.state()).to.equal('destroyed');
    expect(prev.state()).to.equal('running'); // cancelled, not waited out
  });

  it('prevAllocWaitTimeoutMs fails the alloc with a clear task event instead of hanging', async () => {
    const client = newClient({ prevAllocWaitTimeoutMs: 30 });
    const prev = client.addAlloc(makeAlloc([mockTask('web', { run_for: '10s' })]));
    await prev.waitFor('running');
    const r = client.addAlloc(makeAlloc([mockTask('web')], { previousAllocation: prev.allocId }));
    await r.waitFor('stopping');
    const a = r.alloc();
    expect(a.clientStatus).to.equal('failed');
    const ev = a.taskStates!.web!.events.find((e) => e.type === 'Setup Failure')!;
    expect(ev.displayMessage).to.match(/timed out after 30ms waiting for previous allocations to stop/);
    expect(prev.state()).to.equal('running');
  });

  it('the inspector shows one @xstate.actor per watched alloc, under the alloc', async () => {
    const events: InspectionEvent[] = [];
    const client = newClient({ inspect: (e) => events.push(e) });
    const lo = lowPriority();
    const loR = lo.map((a) => client.addAlloc(a));
    await Promise.all(loR.map((r) => r.waitFor('running')));
    const hi = preemptor([lo[0]!.id, lo[1]!.id]);
    const hiR = client.addAlloc(hi);
    await hiR.waitFor('waiting-prev');
    for (const i of [0, 1]) client.updateAlloc({ ...lo[i]!, desiredStatus: 'evict', allocModifyIndex: 2 });
    await hiR.waitFor('running');
    const refs = events.filter((e) => e.type === '@xstate.actor').map((e) => e.actorRef as AnyActorRef);
    const allocRef = refs.find((r) => r.id === `alloc-${hi.id}`)!;
    const watcher = refs.find((r) => r.id === 'await-previous' && parentOf(r) === allocRef)!;
    expect(watcher, 'await-previous under the alloc').to.not.equal(undefined);
    for (const v of [lo[0]!.id, lo[1]!.id]) {
      const children = refs.filter((r) => r.id === v);
      expect(children, v).to.have.length(1);
      expect(parentOf(children[0]!)).to.equal(watcher);
    }
  });
});
