/**
 * AllocBroadcaster / AllocListener (docs/bus.md; Nomad `client/structs/broadcaster.go`).
 *
 * One runner's client-side alloc updates, fanned out to any number of listeners. Built on an RxJS
 * BehaviorSubject: the sender never blocks, a stale version (lower `allocModifyIndex`) is dropped,
 * and each listener is a single-slot mailbox that always holds the newest value, so a slow reader
 * never sees a stale version and never slows the sender.
 *
 * ```
 *   send(a3) ──► BehaviorSubject ──► listener 1 slot [a3]   (a2 overwritten, never read)
 *                                 └─► listener 2 slot [a3]
 * ```
 * @module
 */
import { BehaviorSubject, Observable } from 'rxjs';
import { AllocBroadcasterClosedError } from '../model/errors.ts';
import type { Allocation } from '../model/types.ts';

/** Fans out one runner's alloc updates; see the module doc. */
export class AllocBroadcaster {
  readonly #subject = new BehaviorSubject<Allocation | undefined>(undefined);
  #closed = false;

  /**
   * Offers `alloc` to every listener. Returns false when it was dropped as stale
   * (`allocModifyIndex` strictly lower than the last accepted one; equal is accepted, since the
   * client's own updates keep the server's index).
   * @throws AllocBroadcasterClosedError after {@link close}.
   */
  send(alloc: Allocation): boolean {
    if (this.#closed) throw new AllocBroadcasterClosedError();
    const last = this.#subject.getValue();
    if (last && alloc.allocModifyIndex < last.allocModifyIndex) return false;
    this.#subject.next(alloc);
    return true;
  }

  /** A new listener, primed with the last accepted alloc (even after close). */
  listen(): AllocListener {
    return new AllocListener(this.#subject, this.#closed);
  }

  /** Completes every listener (each can still read its pending value). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#subject.complete();
  }

  /** True after {@link close}. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The last accepted alloc. */
  get last(): Allocation | undefined {
    return this.#subject.getValue();
  }
}

type Waiter = { resolve: (a: Allocation | undefined) => void; reject: (e: unknown) => void; signal?: AbortSignal; onAbort?: () => void };

/** One reader of an {@link AllocBroadcaster}: a single-slot, latest-value mailbox. */
export class AllocListener {
  /** Replays the last accepted alloc, then every accepted one; completes when either side closes. */
  readonly updates$: Observable<Allocation>;
  #slot: Allocation | undefined;
  #done = false;
  #closed = false;
  #waiter: Waiter | undefined;
  #sub: { unsubscribe(): void } | undefined;
  readonly #closers = new Set<() => void>();

  /** @internal created by {@link AllocBroadcaster.listen}. */
  constructor(subject: BehaviorSubject<Allocation | undefined>, broadcasterClosed: boolean) {
    const primed = subject.getValue();
    if (broadcasterClosed) {
      this.#slot = primed;
      this.#done = true;
    } else {
      this.#sub = subject.subscribe({
        next: (a) => a && this.#offer(a),
        complete: () => this.#finish(),
      });
    }
    this.updates$ = new Observable<Allocation>((sub) => {
      if (this.#closed) {
        sub.complete();
        return;
      }
      if (broadcasterClosed || subject.isStopped) {
        if (primed ?? subject.getValue()) sub.next((primed ?? subject.getValue())!);
        sub.complete();
        return;
      }
      const inner = subject.subscribe({ next: (a) => a && sub.next(a), complete: () => sub.complete() });
      const closer = () => sub.complete();
      this.#closers.add(closer);
      return () => {
        this.#closers.delete(closer);
        inner.unsubscribe();
      };
    });
  }

  #offer(a: Allocation) {
    const w = this.#waiter;
    if (w) {
      this.#waiter = undefined;
      if (w.onAbort) w.signal!.removeEventListener('abort', w.onAbort);
      w.resolve(a);
    } else {
      this.#slot = a; // overwrite: only the newest matters
    }
  }

  #finish() {
    this.#done = true;
    this.#sub = undefined;
    const w = this.#waiter;
    if (w) {
      this.#waiter = undefined;
      if (w.onAbort) w.signal!.removeEventListener('abort', w.onAbort);
      w.resolve(undefined);
    }
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
    if (this.#waiter) return Promise.reject(new Error('AllocListener.next: another next() is already waiting'));
    return new Promise((resolve, reject) => {
      const w: Waiter = { resolve, reject, signal };
      if (signal) {
        w.onAbort = () => {
          if (this.#waiter === w) this.#waiter = undefined;
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
    this.#finish();
    for (const c of [...this.#closers]) c();
  }
}
