/**
 * Child actors kept outside their parent's `snapshot.children`: the one place berth touches
 * xstate's private internals. `spec/actors/watchers/detached-children.spec.ts` pins every
 * behaviour relied on here against the installed xstate, so an upgrade fails there first.
 *
 * Why: in xstate 5 every spawn and every stopChild copies the parent's children map, and
 * stopping a parent with K children is O(K^2). A preemptor watching K = 1,000 victims that stop
 * in one tick paid 2.4 s for that (bench P3). A detached child is created with the public
 * `createActor(logic, { parent, id, input })`: it joins the parent's system (the inspector shows
 * it under the parent) and its done and error events reach the parent as for any child. Only
 * two things need internals:
 *  - stopping it: `actor.stop()` refuses a child ("A non-root actor cannot be stopped
 *    directly"), so `_stop()` is used;
 *  - reporting an error: an error observer on the parent silences xstate's own report of an
 *    error nobody observes, so the parent's `observers` count tells whether to rethrow it.
 * @module
 */
import { createActor, type AnyActorLogic, type AnyActorRef } from 'xstate';

type Internal = AnyActorRef & { _stop(): void; _parent?: AnyActorRef; observers: Set<unknown> };

/** Live detached children of each parent, by id. Weak: the entry goes with the parent. */
const live = new WeakMap<AnyActorRef, Map<string, AnyActorRef>>();

/** One child to start. */
export interface DetachedChildSpec {
  id: string;
  logic: AnyActorLogic;
  input: unknown;
}

/**
 * Creates and starts `children` with `parent` as their parent, outside its children map. They
 * are stopped whenever the parent ends (done, stopped or failed). Call once per parent.
 */
export function startDetachedChildren(parent: AnyActorRef, children: DetachedChildSpec[]): void {
  const kids = new Map<string, AnyActorRef>();
  live.set(parent, kids);
  const stopAll = () => {
    const left = [...kids.values()];
    kids.clear();
    for (const c of left) (c as Internal)._stop(); // aborts a promise child's signal
  };
  const me = parent as Internal;
  me.subscribe({
    complete: stopAll,
    error: (err: unknown) => {
      stopAll();
      // Ours is the only observer of a root parent: without us xstate would report the error.
      if (!me._parent && me.observers.size <= 1)
        setTimeout(() => {
          throw err;
        });
    },
  });
  for (const c of children) kids.set(c.id, createActor(c.logic, { parent, id: c.id, input: c.input }));
  for (const c of [...kids.values()]) c.start();
}

/** Forgets a finished child (it stopped itself): O(1). */
export function forgetDetachedChild(parent: AnyActorRef, id: string): void {
  live.get(parent)?.delete(id);
}

/** Ids of the parent's detached children that are still live. */
export function detachedChildIds(parent: AnyActorRef): string[] {
  return [...(live.get(parent)?.keys() ?? [])];
}

/** The parent an actor was created with (detached children included). */
export function parentOf(actor: AnyActorRef): AnyActorRef | undefined {
  return (actor as Internal)._parent;
}
