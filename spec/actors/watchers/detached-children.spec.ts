/**
 * Pins, against the installed xstate, every behaviour `actors/watchers/detached-children.ts`
 * relies on (its private internals among them). An xstate upgrade that changes one fails here.
 */
import { expect } from 'chai';
import { assign, createActor, fromPromise, setup, type AnyActorRef, type InspectionEvent, waitFor } from 'xstate';
import { detachedChildIds, forgetDetachedChild, parentOf, startDetachedChildren } from '../../../actors/watchers/detached-children.ts';

type Internal = AnyActorRef & { _stop(): void; observers: Set<unknown> };

/** A parent that records the done/error events of its children. */
const parentMachine = setup({ types: { context: {} as { seen: string[] } } }).createMachine({
  context: { seen: [] },
  on: {
    'xstate.done.actor.*': {
      actions: assign(({ context, event }) => ({ seen: [...context.seen, `${event.type}:${JSON.stringify((event as { output?: unknown }).output)}`] })),
    },
    'xstate.error.actor.*': {
      actions: assign(({ context, event }) => ({ seen: [...context.seen, `${event.type}:${(event as { error?: Error }).error?.message}`] })),
    },
  },
});

describe('actors/watchers/detached-children (xstate internals, pinned)', () => {
  it("a child created with { parent, id } is not in the parent's children, shares its system, and is seen by the inspector", () => {
    const events: InspectionEvent[] = [];
    const parent = createActor(parentMachine, { inspect: (e) => events.push(e) }).start();
    startDetachedChildren(parent, [{ id: 'w1', logic: fromPromise(() => new Promise(() => {})), input: {} }]);
    expect(Object.keys(parent.getSnapshot().children)).to.deep.equal([]);
    expect(detachedChildIds(parent)).to.deep.equal(['w1']);
    const seen = events.filter((e) => e.type === '@xstate.actor').map((e) => e.actorRef as AnyActorRef);
    const child = seen.find((a) => a.id === 'w1')!;
    expect(parentOf(child)).to.equal(parent);
    expect(child.system).to.equal(parent.system);
    parent.stop();
  });

  it('its done and error events reach the parent as xstate.done.actor.<id> / xstate.error.actor.<id>', async () => {
    const parent = createActor(parentMachine).start();
    startDetachedChildren(parent, [
      { id: 'ok', logic: fromPromise(async ({ input }: { input: number }) => input * 2), input: 21 },
      {
        id: 'bad',
        logic: fromPromise(async () => {
          throw new Error('nope');
        }),
        input: {},
      },
    ]);
    await waitFor(parent, (snap) => snap.context.seen.length === 2);
    expect(parent.getSnapshot().context.seen.sort()).to.deep.equal(['xstate.done.actor.ok:42', 'xstate.error.actor.bad:nope']);
    forgetDetachedChild(parent, 'ok');
    forgetDetachedChild(parent, 'bad');
    expect(detachedChildIds(parent)).to.deep.equal([]);
    expect(parent.getSnapshot().status).to.equal('active');
    parent.stop();
  });

  it('stop() refuses a child with a parent; _stop() stops it and aborts its promise signal', () => {
    const parent = createActor(parentMachine).start();
    let signal: AbortSignal | undefined;
    const child = createActor(
      fromPromise(({ signal: s }) => ((signal = s), new Promise(() => {}))),
      { parent, id: 'c' },
    ).start();
    expect(() => child.stop()).to.throw(/non-root/i);
    (child as unknown as Internal)._stop();
    expect(child.getSnapshot().status).to.equal('stopped');
    expect(signal!.aborted).to.equal(true);
    parent.stop();
  });

  it('the parent ending (stopped) stops every live child: their signals abort', () => {
    const parent = createActor(parentMachine).start();
    const signals: AbortSignal[] = [];
    const logic = fromPromise(({ signal }) => (signals.push(signal), new Promise(() => {})));
    startDetachedChildren(parent, [
      { id: 'a', logic, input: {} },
      { id: 'b', logic, input: {} },
    ]);
    expect(signals.map((s) => s.aborted)).to.deep.equal([false, false]);
    parent.stop();
    expect(signals.map((s) => s.aborted)).to.deep.equal([true, true]);
  });

  it("observers is a Set of the parent's subscriptions (the adapter counts itself to decide whether to report an error)", () => {
    const parent = createActor(parentMachine).start() as unknown as Internal;
    expect(parent.observers).to.be.instanceOf(Set);
    const before = parent.observers.size;
    const sub = parent.subscribe(() => {});
    expect(parent.observers.size).to.equal(before + 1);
    sub.unsubscribe();
    expect(parent.observers.size).to.equal(before);
    parent.stop();
  });
});
