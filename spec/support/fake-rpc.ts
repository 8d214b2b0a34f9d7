/**
 * Test fakes for the watchers: an in-memory {@link FakeRPC} (the servers, the far side of a
 * boundary), a {@link FakeRunner} (a local runner's PrevAllocSource over a real AllocBroadcaster),
 * a {@link ManualClock} and an allocation factory.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { AllocBroadcaster, type AllocListener } from '../../bus/broadcaster.ts';
import type { Clock } from '../../model/clock.ts';
import type { Allocation } from '../../model/types.ts';
import type { PrevAllocSource, ServerRPC } from '../../actors/watchers/types.ts';

/** The server's answer to an empty or malformed alloc id (the Nomad #10200 trap). */
export const UUID_LENGTH_ERROR = 'alloc lookup failed: index error: UUID must be 36 characters';

/** A valid allocation with a fresh id; `over` overrides any field. */
export function makeAlloc(over: Partial<Allocation> = {}): Allocation {
  return {
    id: randomUUID(),
    nodeId: 'node-1',
    jobId: 'web',
    job: { id: 'web', type: 'service', taskGroups: [{ name: 'web', tasks: [{ name: 'server', driver: 'mock_driver', config: {} }] }] },
    taskGroup: 'web',
    desiredStatus: 'run',
    clientStatus: 'running',
    allocModifyIndex: 10,
    ...over,
  };
}

/** One recorded `getAlloc` request, with what became of it. */
export interface RecordedRequest {
  allocId: string;
  minQueryIndex: number;
  allowStale: boolean;
  outcome: 'pending' | 'ok' | 'error' | 'aborted';
}

type Step = { kind: 'error'; error: Error } | { kind: 'stale'; alloc?: Allocation };

interface Waiter {
  allocId: string;
  minQueryIndex: number;
  wake: () => void;
}

/**
 * An in-memory ServerRPC. Holds allocs with a raft-like index (each change takes the next
 * index), answers blocking queries (`allowStale` with `minQueryIndex > 0` waits until the alloc's
 * index exceeds it, or the signal aborts), plays scripted errors and stale answers, rejects ids
 * that are not 36 characters with {@link UUID_LENGTH_ERROR}, and records every request.
 */
export class FakeRPC implements ServerRPC {
  /** Every getAlloc request, in order. */
  readonly requests: RecordedRequest[] = [];
  /** The signal of each request, same order as {@link requests}. */
  readonly signals: AbortSignal[] = [];
  /** Every getNode request. */
  readonly nodeRequests: { nodeId: string }[] = [];
  #index = 100;
  readonly #allocs = new Map<string, { alloc: Allocation | null; index: number }>();
  readonly #script = new Map<string, Step[]>();
  readonly #waiters = new Set<Waiter>();
  readonly #nodes = new Map<string, { id: string; httpAddr: string; tlsEnabled?: boolean }>();
  readonly #requestListeners = new Set<() => void>();

  /** The current raft index. */
  get index(): number {
    return this.#index;
  }

  /** How many requests are waiting (blocking queries in flight). */
  get blocked(): number {
    return this.#waiters.size;
  }

  /** Stores (or updates) an alloc at the next index and wakes blocking queries on it. */
  upsert(alloc: Allocation): number {
    const index = ++this.#index;
    this.#allocs.set(alloc.id, { alloc: structuredClone(alloc), index });
    this.#wake(alloc.id);
    return index;
  }

  /** Garbage-collects an alloc: later reads return null. */
  gc(allocId: string): number {
    const index = ++this.#index;
    this.#allocs.set(allocId, { alloc: null, index });
    this.#wake(allocId);
    return index;
  }

  /** The next `times` requests for `allocId` fail with `error`. */
  failNext(allocId: string, error: Error, times = 1): this {
    for (let i = 0; i < times; i++) this.#steps(allocId).push({ kind: 'error', error });
    return this;
  }

  /**
   * The next `times` stale-allowed requests for `allocId` answer with an index below their
   * minQueryIndex, carrying `alloc` (default: the stored alloc), as a lagging follower would.
   * A consistent read (allowStale false) is not affected and does not use up a step.
   */
  staleNext(allocId: string, times = 1, alloc?: Allocation): this {
    for (let i = 0; i < times; i++) this.#steps(allocId).push({ kind: 'stale', alloc });
    return this;
  }

  /** Registers a node for getNode. */
  addNode(node: { id: string; httpAddr: string; tlsEnabled?: boolean }): void {
    this.#nodes.set(node.id, node);
  }

  /** Resolves once `n` getAlloc requests have been made in total. */
  waitForRequests(n: number): Promise<void> {
    if (this.requests.length >= n) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (this.requests.length >= n) {
          this.#requestListeners.delete(check);
          resolve();
        }
      };
      this.#requestListeners.add(check);
    });
  }

  /** Requests for one alloc id. */
  requestsFor(allocId: string): RecordedRequest[] {
    return this.requests.filter((r) => r.allocId === allocId);
  }

  getAlloc(req: { allocId: string; minQueryIndex: number; allowStale: boolean }, signal: AbortSignal): Promise<{ alloc: Allocation | null; index: number }> {
    const rec: RecordedRequest = { allocId: req.allocId, minQueryIndex: req.minQueryIndex, allowStale: req.allowStale, outcome: 'pending' };
    this.requests.push(rec);
    this.signals.push(signal);
    for (const l of [...this.#requestListeners]) l();
    const settle = <T>(p: Promise<T>): Promise<T> =>
      p.then(
        (v) => ((rec.outcome = 'ok'), v),
        (e) => {
          rec.outcome = signal.aborted ? 'aborted' : 'error';
          throw e;
        },
      );
    return settle(this.#answer(req, signal));
  }

  async #answer(
    req: { allocId: string; minQueryIndex: number; allowStale: boolean },
    signal: AbortSignal,
  ): Promise<{ alloc: Allocation | null; index: number }> {
    await Promise.resolve(); // always asynchronous, like a network call
    signal.throwIfAborted();
    if (req.allocId.length !== 36) throw new Error(UUID_LENGTH_ERROR);
    const steps = this.#script.get(req.allocId);
    const step = steps?.[0]?.kind === 'stale' && !req.allowStale ? undefined : steps?.shift();
    if (step?.kind === 'error') throw step.error;
    if (step?.kind === 'stale') {
      const alloc = step.alloc ?? this.#allocs.get(req.allocId)?.alloc ?? null;
      return { alloc: alloc && structuredClone(alloc), index: Math.max(0, req.minQueryIndex - 1) };
    }
    if (req.allowStale && req.minQueryIndex > 0) {
      while ((this.#allocs.get(req.allocId)?.index ?? this.#index) <= req.minQueryIndex) await this.#block(req, signal);
    }
    const cur = this.#allocs.get(req.allocId);
    // An alloc the servers never had reads as null at the table's index, as Nomad's does.
    return cur ? { alloc: cur.alloc && structuredClone(cur.alloc), index: cur.index } : { alloc: null, index: this.#index };
  }

  #block(req: { allocId: string; minQueryIndex: number }, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        allocId: req.allocId,
        minQueryIndex: req.minQueryIndex,
        wake: () => {
          this.#waiters.delete(w);
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.#waiters.delete(w);
        reject(signal.reason);
      };
      this.#waiters.add(w);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  #wake(allocId: string) {
    for (const w of [...this.#waiters]) if (w.allocId === allocId) w.wake();
  }

  #steps(allocId: string): Step[] {
    let s = this.#script.get(allocId);
    if (!s) this.#script.set(allocId, (s = []));
    return s;
  }

  async getNode(req: { nodeId: string }, signal: AbortSignal) {
    this.nodeRequests.push({ ...req });
    await Promise.resolve();
    signal.throwIfAborted();
    return { node: this.#nodes.get(req.nodeId) ?? null };
  }
}

/** A local runner as a watcher sees it: a PrevAllocSource over a real AllocBroadcaster. */
export class FakeRunner implements PrevAllocSource {
  readonly broadcaster = new AllocBroadcaster();
  readonly allocDir = undefined as never; // watchers never touch it
  /** Every listener handed out, to check they were closed. */
  readonly listeners: AllocListener[] = [];
  readonly closedListeners = new Set<AllocListener>();
  #alloc: Allocation;

  constructor(alloc: Allocation) {
    this.#alloc = alloc;
    this.broadcaster.send(alloc);
  }

  get allocId(): string {
    return this.#alloc.id;
  }

  alloc(): Allocation {
    return this.#alloc;
  }

  listener(): AllocListener {
    const l = this.broadcaster.listen();
    const close = l.close.bind(l);
    l.close = () => {
      this.closedListeners.add(l);
      close();
    };
    this.listeners.push(l);
    return l;
  }

  /** How many listeners are still open. */
  get openListeners(): number {
    return this.listeners.filter((l) => !this.closedListeners.has(l)).length;
  }

  /** Updates the client view and broadcasts it (index bumped). */
  update(over: Partial<Allocation>): void {
    this.#alloc = { ...this.#alloc, ...over, allocModifyIndex: this.#alloc.allocModifyIndex + 1 };
    this.broadcaster.send(this.#alloc);
  }
}

/** A clock driven by hand: timers fire on {@link advance}. */
export class ManualClock implements Clock {
  #now = 0;
  #seq = 0;
  readonly #timers = new Map<number, { at: number; fn: () => void; ms: number }>();
  /** Every delay ever scheduled, in order. */
  readonly scheduled: number[] = [];

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.#now + ms, fn, ms });
    this.scheduled.push(ms);
    for (const l of [...this.#onSchedule]) l();
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  /** Timers not yet fired or cleared. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.#timers) if (e[1].at <= until && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.#timers.delete(next[0]);
      this.#now = next[1].at;
      next[1].fn();
    }
    this.#now = until;
  }

  readonly #onSchedule = new Set<() => void>();

  /** Resolves once `n` timers have been scheduled in total. */
  waitForScheduled(n: number): Promise<void> {
    if (this.scheduled.length >= n) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (this.scheduled.length >= n) {
          this.#onSchedule.delete(check);
          resolve();
        }
      };
      this.#onSchedule.add(check);
    });
  }
}
