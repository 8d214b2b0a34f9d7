/**
 * The group-watcher chart alone (no runners, no servers): its refusals word for word, the effect
 * it names but cannot run itself, and a release that carries no node.
 */
import { expect } from 'chai';
import { createActor, type DoneActorEvent } from 'xstate';
import { InvalidWatchedAllocError, planWatch, WatcherEffectMissingError, watcherMachine, WatchSourceMissingError } from '../../../machines/watcher.machine.ts';
import type { WatchResult } from '../../../model/watch.ts';
import { makeAlloc } from '../../support/fixtures.ts';

describe('watcher chart (pure)', () => {
  it('names the one alloc it cannot watch, or all of them, and how to fix it', () => {
    const one = makeAlloc([], { id: 'new', previousAllocation: 'old' });
    expect(() => planWatch({ alloc: one })).to.throw(
      WatchSourceMissingError,
      'alloc new: no local runner and no server RPC to watch allocation old; pass a runner for it or a ServerRPC as `rpc`',
    );
    expect(() => planWatch({ alloc: one, preemptedRunners: { evicted: null } })).to.throw(
      WatchSourceMissingError,
      'alloc new: no local runner and no server RPC to watch allocations old, evicted; pass a runner for it or a ServerRPC as `rpc`',
    );
    expect(() => planWatch({ alloc: makeAlloc([], { id: 'new' }), preemptedRunners: { '': null }, rpc: {} })).to.throw(
      InvalidWatchedAllocError,
      'alloc new: preemptedRunners has an empty allocation id',
    );
  });

  it('run without its effects provided, it fails naming the effect and where to get it', () => {
    const errors: unknown[] = [];
    const actor = createActor(watcherMachine, { input: { alloc: makeAlloc([], { previousAllocation: 'old' }), rpc: {} } });
    actor.subscribe({ error: (e) => void errors.push(e) });
    actor.start();
    expect(errors).to.have.length(1);
    expect(errors[0]).to.be.instanceOf(WatcherEffectMissingError);
    expect((errors[0] as Error).message).to.equal('watcher effect "startWatchers" not provided: use allocWatcherLogic from actors/watchers');
    // Starting provided, forgetting a released child not: the first release fails naming it.
    const half = createActor(watcherMachine.provide({ actions: { startWatchers: () => undefined } }), {
      input: { alloc: makeAlloc([], { previousAllocation: 'old' }), rpc: {} },
    });
    half.subscribe({ error: (e) => void errors.push(e) });
    half.start();
    half.send({ type: 'xstate.done.actor.old', actorId: 'old', output: {} } as unknown as DoneActorEvent<WatchResult>);
    expect(errors).to.have.length(2);
    expect((errors[1] as Error).message).to.equal('watcher effect "reapChild" not provided: use allocWatcherLogic from actors/watchers');
  });

  it('a previous alloc released without a result is released all the same, with no node', () => {
    const machine = watcherMachine.provide({ actions: { startWatchers: () => undefined, reapChild: () => undefined } });
    const actor = createActor(machine, { input: { alloc: makeAlloc([], { previousAllocation: 'old' }), rpc: {} } }).start();
    expect(actor.getSnapshot().value).to.equal('watching');
    actor.send({ type: 'xstate.done.actor.old', actorId: 'old', output: undefined } as unknown as DoneActorEvent<WatchResult>);
    expect(actor.getSnapshot().status).to.equal('done');
    expect(actor.getSnapshot().output).to.deep.equal({});
  });
});
