/**
 * A host's own actors (`Client.attachActor`): shown in the client's viewer and recordings until
 * they stop or are detached.
 * @module
 */
import type { AnyActorRef } from 'xstate';

/** The attached actors, each with its subscription (which detaches it when it stops). */
export class HostActors {
  readonly #subs = new Map<AnyActorRef, { unsubscribe(): void }>();

  /** The attached actors. */
  actors(): IterableIterator<AnyActorRef> {
    return this.#subs.keys();
  }

  /** Attaches `actor` (a second attach of the same one does nothing), showing it with `show`; returns its detach. */
  attach(actor: AnyActorRef, show: (actor: AnyActorRef) => void): () => void {
    if (this.#subs.has(actor)) return () => undefined;
    const detach = () => {
      this.#subs.get(actor)?.unsubscribe();
      this.#subs.delete(actor);
    };
    // Held before subscribing: an actor that is already done completes (and detaches) at once.
    this.#subs.set(actor, { unsubscribe: () => undefined });
    show(actor);
    const sub = actor.subscribe({ complete: detach, error: detach });
    if (this.#subs.has(actor)) this.#subs.set(actor, sub);
    else sub.unsubscribe();
    return detach;
  }

  /** Detaches every actor. */
  clear(): void {
    for (const sub of this.#subs.values()) sub.unsubscribe();
    this.#subs.clear();
  }
}
