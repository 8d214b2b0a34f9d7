import { expect } from 'chai';
import { assign, createActor, setup, type AnyActorRef } from 'xstate';
import { updateQueueMachine, type ReleasedUpdateEvent, type UpdateQueueEvent } from '../../../machines/alloc/update-queue.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

/**
 * Every update the queue hands back is marked `released`, the one it held too: the alloc chart
 * applies a released update and never queues it again.
 */
describe('alloc update queue: what it hands back is marked released', () => {
  it('an update applied at once and one held through the hooks both come back released', () => {
    const parent = setup({
      types: { context: {} as { got: ReleasedUpdateEvent[] }, events: {} as ReleasedUpdateEvent | { type: 'toQueue'; event: UpdateQueueEvent } },
      actors: { updateQueue: updateQueueMachine },
    }).createMachine({
      context: { got: [] },
      invoke: { id: 'updates', src: 'updateQueue' },
      on: {
        update: { actions: assign(({ context, event }) => ({ got: [...context.got, event as ReleasedUpdateEvent] })) },
        toQueue: { actions: ({ event, self }) => (self.getSnapshot().children.updates as AnyActorRef).send((event as { event: UpdateQueueEvent }).event) },
      },
    });
    const actor = createActor(parent).start();
    const send = (event: UpdateQueueEvent) => actor.send({ type: 'toQueue', event });
    const base = makeAlloc([mockTask('web')]);
    const first = { ...base, allocModifyIndex: 2 };
    const held = { ...base, allocModifyIndex: 3 };
    send({ type: 'update', alloc: first, time: 1 });
    send({ type: 'hooks.started' });
    send({ type: 'update', alloc: held, time: 2 });
    send({ type: 'hooks.done', time: 5 });
    expect(actor.getSnapshot().context.got).to.deep.equal([
      { type: 'update', alloc: first, time: 1, released: true },
      { type: 'update', alloc: held, time: 5, released: true },
    ]);
    actor.stop();
  });
});
