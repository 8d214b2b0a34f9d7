/**
 * One bus subscription shared by many per-allocation listeners of one message kind, routed by
 * `allocId` through a map. A listener per alloc, each on the bus with its own filter, makes every
 * message cost one filter call per alloc on the client: with thousands of allocs each publishing
 * its task states, that is quadratic (it was, for the health trackers). Here a message costs one
 * map lookup, however many allocs listen.
 * @module
 */
import type { Subscription } from 'rxjs';
import type { Bus } from './bus.ts';
import type { BusMessage, BusMessageMap, BusMessageType } from './messages.ts';

/** The message kinds that name an allocation. */
export type AllocMessageType = { [T in BusMessageType]: BusMessageMap[T] extends { allocId: string } ? T : never }[BusMessageType];

/** Per-alloc listeners of one message kind, sharing one bus subscription. */
export interface AllocRoute<T extends AllocMessageType> {
  /** Calls `fn` with each message of this kind for `allocId`; returns what stops it. */
  on(allocId: string, fn: (m: BusMessage<T>) => void): () => void;
  /** How many listeners are registered (for tests and leak checks). */
  readonly size: number;
}

/**
 * A route for `type` on `bus`. It is on the bus only while it has listeners: the first `on`
 * subscribes, removing the last one unsubscribes.
 */
export function byAlloc<T extends AllocMessageType>(bus: Bus, type: T): AllocRoute<T> {
  const listeners = new Map<string, Set<(m: BusMessage<T>) => void>>();
  let count = 0;
  let sub: Subscription | undefined;
  return {
    on(allocId, fn) {
      let set = listeners.get(allocId);
      if (!set) listeners.set(allocId, (set = new Set()));
      // A function registered twice for one alloc is still one listener (as a Set holds it).
      if (set.has(fn)) return () => undefined;
      set.add(fn);
      count++;
      sub ??= bus.of(type).subscribe((m) => {
        const found = listeners.get((m as { allocId: string }).allocId);
        if (found) for (const f of [...found]) f(m);
      });
      let removed = false;
      return () => {
        if (removed) return;
        removed = true;
        set.delete(fn);
        // `set` is still the map's: it leaves the map only when its last listener is removed.
        if (!set.size) listeners.delete(allocId);
        if (--count === 0) {
          sub?.unsubscribe();
          sub = undefined;
        }
      };
    },
    get size() {
      return count;
    },
  };
}
