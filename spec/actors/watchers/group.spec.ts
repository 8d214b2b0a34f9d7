import { expect } from 'chai';
import { createActor, setup, type AnyActorRef, type InspectionEvent } from 'xstate';
import { allocWatcherLogic } from '../../../actors/watchers/group.ts';
import { detachedChildIds as watcherChildren, parentOf } from '../../../actors/watchers/detached-children.ts';
import type { AllocWatcherInput, AllocWatcherOutput } from '../../../actors/watchers/types.ts';
import { InvalidWatchedAllocError, WatchSourceMissingError, planWatch } from '../../../machines/watcher.machine.ts';
import { createBus, type Bus, type BusMessage } from '../../../bus/index.ts';
import { BerthError, PermissionDeniedError, UnknownAllocationError } from '../../../model/errors.ts';
import type { Allocation } from '../../../model/types.ts';
import { FakeRPC, FakeRunner, ManualClock, makeAlloc } from '../../support/fake-rpc.ts';

const fast = { baseMs: 1, staggerMs: 0 };
const tick = () => new Promise<void>((r) => setImmediate(r));

/** Starts a watcher; `done` resolves with its output, or rejects with its error. */
function start(input: AllocWatcherInput, inspect?: (e: InspectionEvent) => void) {
  const actor = createActor(allocWatcherLogic, { input, inspect });
  const done = new Promise<AllocWatcherOutput>((resolve, reject) =>
    actor.subscribe({
      complete: () => {
        const snap = actor.getSnapshot();
        if (snap.status === 'done') resolve(snap.output!);
        else reject(new Error(`watcher ${snap.status}, not done`));
      },
      error: reject,
    }),
  );
  done.catch(() => {}); // tests that stop the watcher look at it themselves
  actor.start();
  return { actor, done };
}

/** Records every bus message. */
function record(bus: Bus) {
  const msgs: BusMessage[] = [];
  bus.messages$.subscribe((m) => msgs.push(m));
  return msgs;
}

function withinMs<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, rej) => (t = setTimeout(() => rej(new Error(`${what}: not within ${ms} ms`)), ms)))]).finally(() =>
    clearTimeout(t),
  );
}

const plain = (rs: FakeRPC['requests']) => rs.map(({ allocId, minQueryIndex, allowStale }) => ({ allocId, minQueryIndex, allowStale }));

describe('actors/watchers/group: allocWatcherLogic', () => {
  describe('nothing to watch', () => {
    it('finishes at once with no previous and no preempted allocs', async () => {
      const { actor, done } = start({ alloc: makeAlloc() });
      expect(actor.getSnapshot().status).to.equal('done');
      expect(await done).to.deep.equal({});
      expect(actor.getSnapshot().children).to.deep.equal({});
    });

    it('finishes at once with an empty preemptedRunners map', async () => {
      const { actor, done } = start({ alloc: makeAlloc(), preemptedRunners: {} });
      expect(actor.getSnapshot().status).to.equal('done');
      expect(await done).to.deep.equal({});
    });
  });

  describe('previous alloc only', () => {
    it('local: released only when a terminated client status is broadcast; desired stop alone keeps waiting', async () => {
      const prev = new FakeRunner(makeAlloc());
      const bus = createBus();
      const msgs = record(bus);
      const alloc = makeAlloc({ previousAllocation: prev.allocId });
      const { actor, done } = start({ alloc, previousRunner: prev, bus });
      await tick();
      expect(actor.getSnapshot().status).to.equal('active');
      expect(watcherChildren(actor)).to.deep.equal([prev.allocId]);
      prev.update({ desiredStatus: 'stop' });
      await tick();
      expect(actor.getSnapshot().status).to.equal('active');
      prev.update({ clientStatus: 'complete' });
      expect(await done).to.deep.equal({});
      expect(actor.getSnapshot().children).to.deep.equal({});
      expect(watcherChildren(actor)).to.deep.equal([]);
      expect(prev.openListeners).to.equal(0);
      expect(msgs.map((m) => ({ ...m, time: 0 }))).to.deep.equal([
        { type: 'watcher.waiting', time: 0, allocId: alloc.id, watchedAllocId: prev.allocId, role: 'previous', mode: 'local' },
        { type: 'watcher.released', time: 0, allocId: alloc.id, watchedAllocId: prev.allocId, reason: 'terminated', clientStatus: 'complete' },
      ]);
    });

    it('local: already terminated before the watcher starts → released at once', async () => {
      const prev = new FakeRunner(makeAlloc({ clientStatus: 'failed' }));
      const { done } = start({ alloc: makeAlloc({ previousAllocation: prev.allocId }), previousRunner: prev });
      expect(await withinMs(done, 50, 'released')).to.deep.equal({});
      expect(prev.openListeners).to.equal(0);
    });

    it('local: a closed broadcaster releases it (listener-closed)', async () => {
      const prev = new FakeRunner(makeAlloc());
      const bus = createBus();
      const msgs = record(bus);
      const { done } = start({ alloc: makeAlloc({ previousAllocation: prev.allocId }), previousRunner: prev, bus });
      await tick();
      prev.broadcaster.close();
      await done;
      expect(msgs.at(-1)).to.deep.include({ type: 'watcher.released', reason: 'listener-closed' });
    });

    it('remote: terminated → previousNodeId is the node it ran on', async () => {
      const rpc = new FakeRPC();
      const prev = makeAlloc({ nodeId: 'node-old' });
      rpc.upsert(prev);
      const { done } = start({ alloc: makeAlloc({ previousAllocation: prev.id }), rpc, retry: fast });
      await rpc.waitForRequests(2);
      rpc.upsert({ ...prev, clientStatus: 'complete' });
      expect(await done).to.deep.equal({ previousNodeId: 'node-old' });
    });

    it('remote: client status unknown → released, node id recorded and returned as previousNodeId', async () => {
      const rpc = new FakeRPC();
      const prev = makeAlloc({ nodeId: 'node-gone' });
      rpc.upsert(prev);
      const bus = createBus();
      const msgs = record(bus);
      const { done } = start({ alloc: makeAlloc({ previousAllocation: prev.id }), rpc, retry: fast, bus });
      await rpc.waitForRequests(2);
      rpc.upsert({ ...prev, clientStatus: 'unknown' });
      expect(await done).to.deep.equal({ previousNodeId: 'node-gone' });
      expect(msgs.at(-1)).to.deep.include({ type: 'watcher.released', reason: 'unknown-status', nodeId: 'node-gone' });
    });

    it('remote: garbage collected (null) → released with no previousNodeId', async () => {
      const rpc = new FakeRPC();
      const prev = makeAlloc();
      rpc.upsert(prev);
      const bus = createBus();
      const msgs = record(bus);
      const { done } = start({ alloc: makeAlloc({ previousAllocation: prev.id }), rpc, retry: fast, bus });
      await rpc.waitForRequests(2);
      rpc.gc(prev.id);
      expect(await done).to.deep.equal({});
      expect(msgs.at(-1)).to.deep.include({ type: 'watcher.released', reason: 'garbage-collected' });
    });

    for (const [reason, error] of [
      ['unknown-allocation', new UnknownAllocationError('Unknown allocation')],
      ['permission-denied', new PermissionDeniedError('Permission denied')],
      ['unknown-allocation', new Error('Unexpected response code: 404 (Unknown allocation "x")')],
      ['permission-denied', new Error('Unexpected response code: 403 (Permission denied)')],
    ] as const) {
      it(`remote: "${error.message}" (${error.constructor.name}) → ${reason}, no node id, no retry`, async () => {
        const rpc = new FakeRPC();
        const prev = makeAlloc({ nodeId: 'node-x' });
        rpc.upsert(prev);
        rpc.failNext(prev.id, error);
        const bus = createBus();
        const msgs = record(bus);
        const { done } = start({ alloc: makeAlloc({ previousAllocation: prev.id }), rpc, retry: fast, bus });
        expect(await done).to.deep.equal({});
        expect(rpc.requests).to.have.length(1);
        expect(msgs.map((m) => m.type)).to.deep.equal(['watcher.waiting', 'watcher.released']);
        expect(msgs[1]).to.deep.include({ reason });
        expect(msgs[1]).to.not.have.property('nodeId');
      });
    }

    it('remote: transient errors are retried (watcher.retry carries the delay), then it succeeds', async () => {
      const rpc = new FakeRPC();
      const prev = makeAlloc({ clientStatus: 'complete', nodeId: 'node-p' });
      rpc.upsert(prev);
      rpc.failNext(prev.id, new Error('rpc error: No cluster leader'), 3);
      const bus = createBus();
      const msgs = record(bus);
      const alloc = makeAlloc({ previousAllocation: prev.id });
      const { done } = start({ alloc, rpc, bus, retry: { baseMs: 2, staggerMs: 2 }, random: () => 0.5 });
      expect(await done).to.deep.equal({ previousNodeId: 'node-p' });
      const retries = msgs.filter((m) => m.type === 'watcher.retry').map((m) => ({ ...m, time: 0 }));
      expect(retries).to.have.length(3);
      expect(retries[0]).to.deep.equal({
        type: 'watcher.retry',
        time: 0,
        allocId: alloc.id,
        watchedAllocId: prev.id,
        error: 'rpc error: No cluster leader',
        delayMs: 3,
      });
      expect(rpc.requests).to.have.length(4);
    });

    it('remote: the retry delay runs on the injected clock (default 30 s + stagger)', async () => {
      const rpc = new FakeRPC();
      const prev = makeAlloc({ clientStatus: 'lost' });
      rpc.upsert(prev);
      rpc.failNext(prev.id, new Error('EOF'));
      const clock = new ManualClock();
      const { actor, done } = start({ alloc: makeAlloc({ previousAllocation: prev.id }), rpc, clock, random: () => 0.999 });
      await clock.waitForScheduled(1);
      expect(clock.scheduled[0]).to.be.closeTo(59_970, 0.001);
      await tick();
      expect(actor.getSnapshot().status).to.equal('active');
      clock.advance(60_000);
      await done;
    });

    it('remote: stale responses are discarded', async () => {
      const rpc = new FakeRPC();
      const prev = makeAlloc({ nodeId: 'node-s' });
      rpc.upsert(prev);
      rpc.staleNext(prev.id, 1, { ...prev, clientStatus: 'complete', nodeId: 'node-stale' });
      const { actor, done } = start({ alloc: makeAlloc({ previousAllocation: prev.id }), rpc, retry: fast });
      await rpc.waitForRequests(3);
      await tick();
      expect(actor.getSnapshot().status).to.equal('active');
      rpc.upsert({ ...prev, clientStatus: 'complete' });
      expect(await done).to.deep.equal({ previousNodeId: 'node-s' });
    });

    it('remote: first a consistent read, then blocking queries with the last index', async () => {
      const rpc = new FakeRPC();
      const prev = makeAlloc();
      const i1 = rpc.upsert(prev);
      const { done } = start({ alloc: makeAlloc({ previousAllocation: prev.id }), rpc, retry: fast });
      await rpc.waitForRequests(2);
      const i2 = rpc.upsert({ ...prev, clientStatus: 'running', allocModifyIndex: 11 });
      await rpc.waitForRequests(3);
      rpc.upsert({ ...prev, clientStatus: 'complete' });
      await done;
      expect(plain(rpc.requests)).to.deep.equal([
        { allocId: prev.id, minQueryIndex: 0, allowStale: false },
        { allocId: prev.id, minQueryIndex: i1, allowStale: true },
        { allocId: prev.id, minQueryIndex: i2, allowStale: true },
      ]);
    });
  });

  describe('preempted allocs', () => {
    it('waits for several, mixing local and remote, some already terminated before the watcher starts', async () => {
      const rpc = new FakeRPC();
      const bus = createBus();
      const msgs = record(bus);
      const localRunning = new FakeRunner(makeAlloc());
      const localDone = new FakeRunner(makeAlloc({ clientStatus: 'complete' }));
      const remoteRunning = makeAlloc({ nodeId: 'node-r' });
      const remoteDone = makeAlloc({ clientStatus: 'failed', nodeId: 'node-d' });
      const remoteGone = makeAlloc();
      rpc.upsert(remoteRunning);
      rpc.upsert(remoteDone);
      rpc.gc(remoteGone.id);
      const alloc = makeAlloc({
        preemptedAllocations: [localRunning.allocId, localDone.allocId, remoteRunning.id, remoteDone.id, remoteGone.id],
      });
      const { actor, done } = start({
        alloc,
        rpc,
        bus,
        retry: fast,
        preemptedRunners: {
          [localRunning.allocId]: localRunning,
          [localDone.allocId]: localDone,
          [remoteRunning.id]: null,
          [remoteDone.id]: null,
          [remoteGone.id]: null,
        },
      });
      await rpc.waitForRequests(4);
      await tick();
      expect(actor.getSnapshot().status).to.equal('active');
      expect(watcherChildren(actor).sort()).to.deep.equal([localRunning.allocId, remoteRunning.id].sort());
      localRunning.update({ clientStatus: 'complete' });
      await tick();
      expect(actor.getSnapshot().status).to.equal('active');
      expect(watcherChildren(actor)).to.deep.equal([remoteRunning.id]);
      rpc.upsert({ ...remoteRunning, clientStatus: 'lost' });
      // preempted allocs never set previousNodeId, even when a remote watcher learnt a node
      expect(await done).to.deep.equal({});
      const waiting = msgs.filter((m) => m.type === 'watcher.waiting');
      expect(waiting.map((m) => m.type === 'watcher.waiting' && [m.watchedAllocId, m.role, m.mode])).to.deep.equal([
        [localRunning.allocId, 'preempted', 'local'],
        [localDone.allocId, 'preempted', 'local'],
        [remoteRunning.id, 'preempted', 'remote'],
        [remoteDone.id, 'preempted', 'remote'],
        [remoteGone.id, 'preempted', 'remote'],
      ]);
      const released = Object.fromEntries(msgs.flatMap((m) => (m.type === 'watcher.released' ? [[m.watchedAllocId, m.reason]] : [])));
      expect(released).to.deep.equal({
        [localRunning.allocId]: 'terminated',
        [localDone.allocId]: 'terminated',
        [remoteRunning.id]: 'terminated',
        [remoteDone.id]: 'terminated',
        [remoteGone.id]: 'garbage-collected',
      });
      expect(new Set(rpc.requests.map((r) => r.allocId))).to.deep.equal(new Set([remoteRunning.id, remoteDone.id, remoteGone.id]));
    });
  });

  describe('previous and preempted together', () => {
    it('awaits all; each remote request carries its own id, never ""', async () => {
      const rpc = new FakeRPC();
      const prev = makeAlloc({ nodeId: 'node-prev' });
      const evictedA = makeAlloc();
      const evictedB = new FakeRunner(makeAlloc());
      rpc.upsert(prev);
      rpc.upsert(evictedA);
      const alloc = makeAlloc({ previousAllocation: prev.id, preemptedAllocations: [evictedA.id, evictedB.allocId] });
      const { actor, done } = start({ alloc, rpc, retry: fast, preemptedRunners: { [evictedA.id]: null, [evictedB.allocId]: evictedB } });
      await rpc.waitForRequests(4);
      rpc.upsert({ ...prev, clientStatus: 'complete' });
      rpc.upsert({ ...evictedA, clientStatus: 'complete' });
      await tick();
      expect(actor.getSnapshot().status, 'still waits for the local preempted alloc').to.equal('active');
      evictedB.update({ clientStatus: 'complete' });
      expect(await done).to.deep.equal({ previousNodeId: 'node-prev' });
      expect(rpc.requests.every((r) => r.allocId === prev.id || r.allocId === evictedA.id)).to.equal(true);
      expect(rpc.requests.some((r) => r.allocId === '')).to.equal(false);
      expect(plain(rpc.requestsFor(prev.id))[0]).to.deep.equal({ allocId: prev.id, minQueryIndex: 0, allowStale: false });
      expect(plain(rpc.requestsFor(evictedA.id))[0]).to.deep.equal({ allocId: evictedA.id, minQueryIndex: 0, allowStale: false });
    });

    it('Nomad #10200: a preempting alloc with no previousAllocation watches its remote preempted alloc by its own id', async () => {
      // The preempted alloc stopped after the scheduler decided to preempt it and its runner is
      // gone, so it is watched remotely. Watching alloc.previousAllocation ("") instead would get
      // "UUID must be 36 characters" from the servers, retried forever.
      const rpc = new FakeRPC();
      const evicted = makeAlloc({ clientStatus: 'complete', nodeId: 'node-e' });
      rpc.upsert(evicted);
      const bus = createBus();
      const retries: BusMessage[] = [];
      bus.of('watcher.retry').subscribe((m) => retries.push(m));
      const alloc = makeAlloc({ preemptedAllocations: [evicted.id] });
      expect(alloc.previousAllocation).to.equal(undefined);
      const { done } = start({ alloc, rpc, bus, retry: fast, preemptedRunners: { [evicted.id]: null } });
      expect(await withinMs(done, 1000, 'the preempting alloc was released')).to.deep.equal({});
      expect(plain(rpc.requests)).to.deep.equal([{ allocId: evicted.id, minQueryIndex: 0, allowStale: false }]);
      expect(retries).to.deep.equal([]);
    });

    it('Nomad #10200: the same with an empty-string previousAllocation', async () => {
      const rpc = new FakeRPC();
      const evicted = makeAlloc({ clientStatus: 'lost' });
      rpc.upsert(evicted);
      const alloc: Allocation = { ...makeAlloc(), previousAllocation: '' };
      const { done } = start({ alloc, rpc, retry: fast, preemptedRunners: { [evicted.id]: null } });
      expect(await withinMs(done, 1000, 'released')).to.deep.equal({});
      expect(rpc.requests.map((r) => r.allocId)).to.deep.equal([evicted.id]);
    });
  });

  describe('stopping', () => {
    it('stopping during the wait releases within 100 ms, aborts the in-flight rpc and closes listeners', async () => {
      const rpc = new FakeRPC();
      const prev = new FakeRunner(makeAlloc());
      const evicted = makeAlloc();
      rpc.upsert(evicted);
      const { actor } = start({
        alloc: makeAlloc({ previousAllocation: prev.allocId }),
        previousRunner: prev,
        rpc,
        retry: fast,
        preemptedRunners: { [evicted.id]: null },
      });
      await rpc.waitForRequests(2);
      await tick();
      expect(rpc.blocked).to.equal(1);
      expect(prev.openListeners).to.equal(1);
      actor.stop();
      await tick(); // one tick: the stop does not wait for the blocked query
      expect(actor.getSnapshot().status).to.equal('stopped');
      expect(rpc.signals.at(-1)!.aborted).to.equal(true);
      expect(rpc.requests.at(-1)!.outcome).to.equal('aborted');
      expect(rpc.blocked).to.equal(0);
      expect(prev.openListeners).to.equal(0);
    });

    it('stopping during a retry back-off clears its timer', async () => {
      const rpc = new FakeRPC();
      const prev = makeAlloc();
      rpc.upsert(prev);
      rpc.failNext(prev.id, new Error('no leader'));
      const clock = new ManualClock();
      const { actor } = start({ alloc: makeAlloc({ previousAllocation: prev.id }), rpc, clock });
      await clock.waitForScheduled(1);
      expect(clock.pending).to.equal(1);
      actor.stop();
      await tick();
      expect(clock.pending).to.equal(0);
      expect(rpc.requests).to.have.length(1);
    });

    it('stopping right after start leaves no handles, listeners or requests behind', async () => {
      const rpc = new FakeRPC();
      const runners = [new FakeRunner(makeAlloc()), new FakeRunner(makeAlloc())];
      const remote = makeAlloc();
      rpc.upsert(remote);
      const { actor } = start({
        alloc: makeAlloc(),
        rpc,
        retry: fast,
        preemptedRunners: { [runners[0]!.allocId]: runners[0]!, [runners[1]!.allocId]: runners[1]!, [remote.id]: null },
      });
      actor.stop();
      await tick();
      expect(runners.map((r) => r.openListeners)).to.deep.equal([0, 0]);
      expect(rpc.blocked).to.equal(0);
      expect(rpc.signals.every((s) => s.aborted)).to.equal(true);
    });
  });

  describe('errors at start', () => {
    it('fails at start with a BerthError when a watched alloc has no local runner and there is no rpc', async () => {
      const evicted = makeAlloc();
      const prevId = makeAlloc().id;
      const { done } = start({ alloc: makeAlloc({ previousAllocation: prevId }), preemptedRunners: { [evicted.id]: null } });
      const err = await done.then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err).to.be.instanceOf(WatchSourceMissingError).and.instanceOf(BerthError);
      expect(err!.message).to.include('no local runner and no server RPC to watch allocations');
      expect(err!.message).to.include(prevId).and.include(evicted.id);
    });

    it('needs no rpc when every watched alloc has a local runner', async () => {
      const prev = new FakeRunner(makeAlloc({ clientStatus: 'complete' }));
      const evicted = new FakeRunner(makeAlloc({ clientStatus: 'complete' }));
      const { done } = start({
        alloc: makeAlloc({ previousAllocation: prev.allocId }),
        previousRunner: prev,
        preemptedRunners: { [evicted.allocId]: evicted },
      });
      expect(await done).to.deep.equal({});
    });
  });

  describe('plan', () => {
    it('watches an id listed both as previous and preempted once, as the previous alloc', () => {
      const prev = makeAlloc();
      const plan = planWatch({ alloc: makeAlloc({ previousAllocation: prev.id }), preemptedRunners: { [prev.id]: null }, rpc: new FakeRPC() });
      expect(plan).to.deep.equal([{ watchedAllocId: prev.id, role: 'previous', mode: 'remote' }]);
    });

    it('refuses an empty preempted id at start rather than asking the servers for ""', async () => {
      const { done } = start({ alloc: makeAlloc(), preemptedRunners: { '': null }, rpc: new FakeRPC() });
      const err = await done.then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err).to.be.instanceOf(InvalidWatchedAllocError);
    });
  });

  describe('invoked by a parent machine (as the alloc machine does)', () => {
    const parentOf = (input: AllocWatcherInput) =>
      setup({ actors: { awaitPrevious: allocWatcherLogic } }).createMachine({
        context: { previousNodeId: undefined as string | undefined, error: undefined as string | undefined },
        initial: 'waiting',
        states: {
          waiting: {
            invoke: {
              id: 'await-previous',
              src: 'awaitPrevious',
              input: () => input,
              onDone: { target: 'running', actions: ({ context, event }) => void (context.previousNodeId = event.output.previousNodeId) },
              onError: { target: 'failed', actions: ({ context, event }) => void (context.error = (event.error as Error).message) },
            },
          },
          running: { type: 'final' },
          failed: { type: 'final' },
        },
      });

    it('delivers the output through onDone', async () => {
      const rpc = new FakeRPC();
      const prev = makeAlloc({ clientStatus: 'complete', nodeId: 'node-9' });
      rpc.upsert(prev);
      const local = new FakeRunner(makeAlloc());
      const parent = createActor(
        parentOf({ alloc: makeAlloc({ previousAllocation: prev.id }), rpc, retry: fast, preemptedRunners: { [local.allocId]: local } }),
      );
      const finished = new Promise<void>((resolve, reject) => parent.subscribe({ complete: resolve, error: reject }));
      parent.start();
      await tick();
      expect(parent.getSnapshot().value).to.equal('waiting');
      local.update({ clientStatus: 'complete' });
      await finished;
      expect(parent.getSnapshot().value).to.equal('running');
      expect(parent.getSnapshot().context.previousNodeId).to.equal('node-9');
    });

    it('delivers the missing-source error through onError', async () => {
      const parent = createActor(parentOf({ alloc: makeAlloc({ previousAllocation: makeAlloc().id }) }));
      parent.subscribe({ error: () => {} });
      parent.start();
      expect(parent.getSnapshot().value).to.equal('failed');
      expect(parent.getSnapshot().context.error).to.match(/no local runner and no server RPC/);
    });

    it('stopping the parent stops the watcher and its children', async () => {
      const local = new FakeRunner(makeAlloc());
      const rpc = new FakeRPC();
      const remote = makeAlloc();
      rpc.upsert(remote);
      const parent = createActor(parentOf({ alloc: makeAlloc(), rpc, retry: fast, preemptedRunners: { [local.allocId]: local, [remote.id]: null } }));
      parent.start();
      await rpc.waitForRequests(2);
      parent.stop();
      await tick();
      expect(local.openListeners).to.equal(0);
      expect(rpc.signals.every((s) => s.aborted)).to.equal(true);
      expect(rpc.blocked).to.equal(0);
    });
  });

  describe('actors', () => {
    it('inspection shows one @xstate.actor per watched alloc, id = the watched id, parent = the watcher', async () => {
      const rpc = new FakeRPC();
      const prev = new FakeRunner(makeAlloc());
      const evicted = [makeAlloc({ clientStatus: 'complete' }), makeAlloc({ clientStatus: 'complete' })];
      for (const e of evicted) rpc.upsert(e);
      const events: InspectionEvent[] = [];
      const { actor, done } = start(
        {
          alloc: makeAlloc({ previousAllocation: prev.allocId }),
          previousRunner: prev,
          rpc,
          retry: fast,
          preemptedRunners: Object.fromEntries(evicted.map((e) => [e.id, null])),
        },
        (e) => events.push(e),
      );
      prev.update({ clientStatus: 'complete' });
      await done;
      const actors = events.filter((e) => e.type === '@xstate.actor').map((e) => e.actorRef as AnyActorRef);
      const children = actors.filter((a) => parentOf(a) === actor);
      expect(children.map((c) => c.id)).to.deep.equal([prev.allocId, ...evicted.map((e) => e.id)]);
      expect(actors).to.have.length(1 + children.length); // the watcher and its children, nothing else
    });

    it('reaps each child as soon as it finishes; a finished watcher holds no children', async () => {
      const a = new FakeRunner(makeAlloc());
      const b = new FakeRunner(makeAlloc());
      const { actor, done } = start({ alloc: makeAlloc(), preemptedRunners: { [a.allocId]: a, [b.allocId]: b } });
      await tick();
      expect(watcherChildren(actor)).to.deep.equal([a.allocId, b.allocId]);
      a.update({ clientStatus: 'complete' });
      await tick();
      expect(watcherChildren(actor)).to.deep.equal([b.allocId]);
      expect(actor.getSnapshot().context).to.deep.include({ watching: 2, pending: 1 });
      b.update({ clientStatus: 'failed' });
      await done;
      expect(actor.getSnapshot().children).to.deep.equal({});
      expect(watcherChildren(actor)).to.deep.equal([]);
    });

    it('keeps only plain data in its context', async () => {
      const rpc = new FakeRPC();
      const prev = new FakeRunner(makeAlloc());
      const alloc = makeAlloc({ previousAllocation: prev.allocId });
      const { actor } = start({ alloc, previousRunner: prev, rpc, bus: createBus(), clock: new ManualClock(), preemptedRunners: {} });
      const ctx = actor.getSnapshot().context;
      expect(JSON.parse(JSON.stringify(ctx))).to.deep.equal(ctx);
      expect(ctx).to.deep.equal({
        allocId: alloc.id,
        previousAllocId: prev.allocId,
        plan: [{ watchedAllocId: prev.allocId, role: 'previous', mode: 'local' }],
        watching: 1,
        pending: 1,
      });
      actor.stop();
    });

    it('watches 250 local allocs and releases them all (scale; the benchmark goes to 1,000)', async function () {
      this.timeout(20_000);
      const runners = Array.from({ length: 250 }, () => new FakeRunner(makeAlloc()));
      const { actor, done } = start({ alloc: makeAlloc(), preemptedRunners: Object.fromEntries(runners.map((r) => [r.allocId, r])) });
      await tick();
      expect(watcherChildren(actor)).to.have.length(250);
      for (const r of runners) r.update({ clientStatus: 'complete' });
      await done;
      expect(actor.getSnapshot().children).to.deep.equal({});
      expect(watcherChildren(actor)).to.deep.equal([]);
      expect(runners.every((r) => r.openListeners === 0)).to.equal(true);
    });
  });
});
