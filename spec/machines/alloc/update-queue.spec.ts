import { expect } from 'chai';
import { assign, createActor, setup, type AnyActorRef } from 'xstate';
import { updateQueueMachine, type ReleasedUpdateEvent, type UpdateQueueEvent } from '../../../machines/alloc/update-queue.ts';
import type { Allocation } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

/** A parent that holds the queue as the alloc chart does and records what it is told to apply. */
function harness() {
  const parent = setup({
    types: { context: {} as { applied: ReleasedUpdateEvent[] }, events: {} as ReleasedUpdateEvent | { type: 'toQueue'; event: UpdateQueueEvent } },
    actors: { updateQueue: updateQueueMachine },
  }).createMachine({
    context: { applied: [] },
    invoke: { id: 'updates', src: 'updateQueue' },
    on: {
      update: { actions: assign(({ context, event }) => ({ applied: [...context.applied, event as ReleasedUpdateEvent] })) },
      toQueue: { actions: ({ event, self }) => (self.getSnapshot().children.updates as AnyActorRef).send((event as { event: UpdateQueueEvent }).event) },
    },
  });
  const actor = createActor(parent).start();
  const queue = () => (actor.getSnapshot().children.updates as AnyActorRef).getSnapshot() as { value: string; context: { queued?: Allocation } };
  const base = makeAlloc([mockTask('web')]);
  return {
    actor,
    queue,
    send: (event: UpdateQueueEvent) => actor.send({ type: 'toQueue', event }),
    at: (i: number, name = ''): Allocation => ({ ...base, allocModifyIndex: i, job: { ...base.job, name } }),
    applied: () => actor.getSnapshot().context.applied.map((a) => [a.alloc.allocModifyIndex, a.alloc.job.name, a.time]),
  };
}

describe('alloc update queue chart (pure, alone)', () => {
  it('idle: an update is handed back to apply at once; hooks starting moves it to hooking', () => {
    const h = harness();
    expect(h.queue().value).to.equal('idle');
    h.send({ type: 'update', alloc: h.at(2, 'a'), time: 5 });
    expect(h.applied()).to.deep.equal([[2, 'a', 5]]);
    expect(h.queue().value).to.equal('idle'); // a stop or a reconnect runs no hooks: nothing to wait for
    h.send({ type: 'hooks.started' });
    expect(h.queue().value).to.equal('hooking');
    expect(h.queue().context).to.deep.equal({});
  });

  it('hooking: a second and a third update keep only the newest; hooks done releases it, at the time they ended', () => {
    const h = harness();
    h.send({ type: 'update', alloc: h.at(2), time: 1 });
    h.send({ type: 'hooks.started' });
    h.send({ type: 'update', alloc: h.at(5, 'b'), time: 2 });
    h.send({ type: 'update', alloc: h.at(4, 'lower'), time: 3 }); // lower than the held one: dropped
    expect(h.queue().context.queued?.job.name).to.equal('b');
    h.send({ type: 'update', alloc: h.at(5, 'c'), time: 4 }); // equal index: the newer call wins
    expect(h.queue().context.queued?.job.name).to.equal('c');
    expect(h.applied()).to.deep.equal([[2, '', 1]]); // nothing applied while the hooks run
    h.send({ type: 'hooks.done', time: 9 });
    expect(h.applied()).to.deep.equal([
      [2, '', 1],
      [5, 'c', 9],
    ]);
    expect(h.queue().value).to.equal('idle');
    expect(h.queue().context.queued).to.equal(undefined);
  });

  it('hooks that failed end the same way (the alloc chart reports both as hooks.done); with nothing held nothing is applied', () => {
    const h = harness();
    h.send({ type: 'update', alloc: h.at(2), time: 1 });
    h.send({ type: 'hooks.started' });
    h.send({ type: 'hooks.done', time: 3 });
    expect(h.queue().value).to.equal('idle');
    expect(h.applied()).to.have.length(1);
    h.send({ type: 'hooks.done', time: 4 }); // a stray end while idle changes nothing
    expect(h.applied()).to.have.length(1);
    // The released update's own hooks: the queue waits again.
    h.send({ type: 'update', alloc: h.at(3), time: 5 });
    h.send({ type: 'hooks.started' });
    h.send({ type: 'update', alloc: h.at(6), time: 6 });
    h.send({ type: 'hooks.done', time: 7 });
    h.send({ type: 'hooks.started' });
    expect(h.queue().value).to.equal('hooking');
    expect(h.applied().map(([i]) => i)).to.deep.equal([2, 3, 6]);
  });
});
