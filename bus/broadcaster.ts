/**
 * AllocBroadcaster / AllocListener (docs/bus.md; Nomad `client/structs/broadcaster.go`).
 *
 * One runner's client-side alloc updates, fanned out to any number of listeners. The state lives
 * in an RxJS `BehaviorSubject<Allocation>` (made by the first send): `send` drops a stale version
 * (lower `allocModifyIndex`) and calls the subject's `next`. Each listener is one subscription to
 * that subject feeding a single-slot mailbox that always holds the newest value, so a slow reader
 * never sees a stale version and never slows the sender; its `updates$` hangs off the same
 * subscription (a listener sits on the subject once, however it is read).
 *
 * ```
 *   send(a3) ──► BehaviorSubject.next(a3) ──► listener 1: slot [a3]   (a2 overwritten, never read)
 *                                        └──► listener 2: slot [a3] ──► its updates$ observers
 * ```
 * Hosts read the state as an Observable (`subject`, `state$`); only `send` writes it.
 * @module
 */
import { BehaviorSubject, Observable, type Observer, type Subscriber, type Subscription, type Unsubscribable } from 'rxjs';
import { AllocBroadcasterClosedError, BerthError } from '../model/errors.ts';
import type { Allocation } from '../model/types.ts';

/** An observer that subscribed before the first send: attached to the subject once it exists. */
interface Early {
  observer: Partial<Observer<Allocation>>;
  sub?: Subscription;
  gone: boolean;
}

/** Fans out one runner's alloc updates; see the module doc. */
export class AllocBroadcaster {
  /** The state: made by the first send (a BehaviorSubject always holds a value). */
  #subject: BehaviorSubject<Allocation> | undefined;
  #early: Early[] = [];
  #closed = false;
  /** The last accepted alloc (the subject's value, or a newer one still queued). */
  #last: Allocation | undefined;
  /** Sends made from inside a listener's callback wait here, so every listener sees sends in order. */
  #queue: Allocation[] | undefined;

  /** The state as hosts read it: the last accepted alloc at once, then every accepted one. */
  readonly state$: Observable<Allocation> = new Observable<Allocation>((sub) => {
    const u = this._attach(sub);
    return () => u.unsubscribe();
  });

  /**
   * The BehaviorSubject that holds the state, read-only (typed as an Observable); undefined until
   * the first send. Prefer {@link state$}, which also covers the time before it.
   */
  get subject(): Observable<Allocation> | undefined {
    return this.#subject;
  }

  /**
   * Offers `alloc` to every listener. Returns false when it was dropped as stale
   * (`allocModifyIndex` strictly lower than the last accepted one; equal is accepted, since the
   * client's own updates keep the server's index).
   * @throws AllocBroadcasterClosedError after {@link close}.
   */
  send(alloc: Allocation): boolean {
    if (this.#closed) throw new AllocBroadcasterClosedError();
    const last = this.#last;
    if (last && alloc.allocModifyIndex < last.allocModifyIndex) return false;
    this.#last = alloc;
    if (this.#queue) {
      this.#queue.push(alloc);
      return true;
    }
    this.#queue = [];
    try {
      if (this.#subject) this.#subject.next(alloc);
      else this.#begin(alloc);
      // RxJS delivers a nested next to every observer at once, before the outer one has reached
      // the rest: queued instead, each listener sees the sends in order and keeps the newest.
      for (let i = 0; i < this.#queue.length; i++) this.#subject!.next(this.#queue[i]!);
    } finally {
      this.#queue = undefined;
    }
    return true;
  }

  /** The first value: the subject is born with it, and the early observers get it as they attach. */
  #begin(alloc: Allocation): void {
    const subject = (this.#subject = new BehaviorSubject(alloc));
    const early = this.#early;
    this.#early = [];
    for (const e of early) if (!e.gone) e.sub = subject.subscribe(e.observer);
  }

  /** A new listener, primed with the last accepted alloc (even after close). */
  listen(): AllocListener {
    return new AllocListener(this, this.last, this.#closed);
  }

  /** @internal subscribes `observer` to the state (now, or at the first send). */
  _attach(observer: Partial<Observer<Allocation>>): Unsubscribable {
    if (this.#subject) return this.#subject.subscribe(observer);
    if (this.#closed) {
      observer.complete?.();
      return { unsubscribe: () => undefined };
    }
    const e: Early = { observer, gone: false };
    this.#early.push(e);
    return {
      unsubscribe: () => {
        e.gone = true;
        e.sub?.unsubscribe();
      },
    };
  }

  /** Completes every listener (each can still read its pending value). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const early = this.#early;
    this.#early = [];
    for (const e of early) if (!e.gone) e.observer.complete?.();
    this.#subject?.complete();
  }

  /** True after {@link close}. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The last accepted alloc. */
  get last(): Allocation | undefined {
    return this.#last;
  }
}

type Waiter = { resolve: (a: Allocation | undefined) => void; reject: (e: unknown) => void; signal?: AbortSignal; onAbort?: () => void };

/** One reader of an {@link AllocBroadcaster}: a single-slot, latest-value mailbox. */
export class AllocListener {
  /** Replays the last accepted alloc, then every accepted one; completes when either side closes. */
  readonly updates$: Observable<Allocation>;
  readonly #source: AllocBroadcaster;
  #slot: Allocation | undefined;
  /** No more values will arrive (the broadcaster or this listener closed). Set by the constructor. */
  #done: boolean;
  #closed = false;
  #waiter: Waiter | undefined;
  /** Live `updates$` subscribers, fed from this listener's one subscription. */
  #observers: readonly Subscriber<Allocation>[] = [];
  #sub: Unsubscribable | undefined;

  /** @internal created by {@link AllocBroadcaster.listen}. */
  constructor(source: AllocBroadcaster, primed: Allocation | undefined, broadcasterClosed: boolean) {
    this.#source = source;
    this.#done = broadcasterClosed;
    this.updates$ = new Observable<Allocation>((sub) => {
      if (this.#closed) {
        sub.complete();
        return;
      }
      const current = this.#source.last;
      if (current) sub.next(current);
      if (this.#done) {
        sub.complete();
        return;
      }
      this.#observers = [...this.#observers, sub];
      return () => {
        this.#observers = this.#observers.filter((o) => o !== sub);
      };
    });
    if (broadcasterClosed) {
      this.#slot = primed;
      return;
    }
    // One subscription: a BehaviorSubject hands over its current value at once, which primes the slot.
    this.#sub = source._attach({ next: (a) => this.#offer(a), complete: () => this.#finish() });
  }

  /** The subject accepted `a`. */
  #offer(a: Allocation): void {
    const w = this.#waiter;
    if (w) {
      this.#waiter = undefined;
      if (w.onAbort) w.signal!.removeEventListener('abort', w.onAbort);
      w.resolve(a);
    } else {
      this.#slot = a; // overwrite: only the newest matters
    }
    const obs = this.#observers;
    for (let i = 0; i < obs.length; i++) obs[i]!.next(a);
  }

  /** No more values: wake a waiting reader with undefined and complete `updates$`. */
  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    const w = this.#waiter;
    if (w) {
      this.#waiter = undefined;
      if (w.onAbort) w.signal!.removeEventListener('abort', w.onAbort);
      w.resolve(undefined);
    }
    const obs = this.#observers;
    this.#observers = [];
    for (const o of obs) o.complete();
  }

  /**
   * The newest accepted alloc this listener has not taken yet; waits for one if none is pending.
   * Resolves undefined once closed and drained. An aborted signal rejects with `signal.reason`.
   */
  next(signal?: AbortSignal): Promise<Allocation | undefined> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#slot) {
      const a = this.#slot;
      this.#slot = undefined;
      return Promise.resolve(a);
    }
    if (this.#done) return Promise.resolve(undefined);
    if (this.#waiter) return Promise.reject(new BerthError('AllocListener.next: another next() is already waiting'));
    return new Promise((resolve, reject) => {
      const w: Waiter = { resolve, reject, signal };
      if (signal) {
        // Only a waiting `w` can hear the abort: a value or a close removes this listener first.
        w.onAbort = () => {
          this.#waiter = undefined;
          reject(signal.reason);
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.#waiter = w;
    });
  }

  /** Stops listening; a pending value can still be read, then `next()` resolves undefined. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#sub?.unsubscribe();
    this.#sub = undefined;
    this.#finish();
  }
}
