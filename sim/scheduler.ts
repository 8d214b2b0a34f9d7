/**
 * Virtual time: every timer of the simulated world (xstate delays, restart and retry back-off,
 * state-store write coalescing, simulated driver calls, process lifetimes) is a task here, run in
 * (time, sequence) order. Between two tasks the microtask queue drains completely, so the
 * promise chains of berth's real code run exactly as far as they can before time moves on.
 * @module
 */
import type { Clock } from '../model/clock.ts';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  owner: string;
  live: boolean;
}

/** Resolves once every microtask queued so far (and every one they queue) has run. */
export const settle = () => new Promise<void>((r) => setImmediate(r));

/** The virtual-time scheduler. Time starts at `epoch` (ms). */
export class Scheduler {
  #now: number;
  #seq = 0;
  #heap: Timer[] = [];
  /** Live timers per owner (a host generation, "world", ...). */
  #owned = new Map<string, Set<Timer>>();
  steps = 0;

  constructor(epoch: number) {
    this.#now = epoch;
  }

  now(): number {
    return this.#now;
  }

  /** Owners that are gone (crashed hosts): their timers never run, and new ones are born dead. */
  readonly #dead = new Set<string>();

  /** Schedules `fn` after `ms` of virtual time, owned by `owner`. */
  at(ms: number, fn: () => void, owner: string): Timer {
    const t: Timer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn, owner, live: !this.#dead.has(owner) };
    if (!t.live) return t;
    this.#push(t);
    let set = this.#owned.get(owner);
    if (!set) this.#owned.set(owner, (set = new Set()));
    set.add(t);
    return t;
  }

  cancel(t: Timer | undefined): void {
    if (!t || !t.live) return;
    t.live = false;
    this.#owned.get(t.owner)?.delete(t);
  }

  /** Cancels every timer of `owner` (a crashed host's), now and later. */
  cancelOwner(owner: string): number {
    this.#dead.add(owner);
    const set = this.#owned.get(owner);
    if (!set) return 0;
    const n = set.size;
    for (const t of set) t.live = false;
    this.#owned.delete(owner);
    return n;
  }

  /** Live timers of `owner`. */
  pending(owner: string): number {
    return this.#owned.get(owner)?.size ?? 0;
  }

  /** A berth {@link Clock} whose timers belong to `owner`. */
  clock(owner: string): Clock {
    return {
      now: () => this.#now,
      setTimeout: (fn, ms) => this.at(ms, fn, owner),
      clearTimeout: (h) => this.cancel(h as Timer),
    };
  }

  /**
   * Runs tasks in order until virtual time would pass `until`, or nothing is left, or `maxSteps`
   * tasks ran. Returns false when the step budget ran out (a livelock).
   */
  async runUntil(until: number, maxSteps = 1e6): Promise<boolean> {
    await settle();
    for (;;) {
      const t = this.#peek();
      if (!t || t.at > until) break;
      this.#pop();
      if (!t.live) continue;
      if (++this.steps > maxSteps) return false;
      t.live = false;
      this.#owned.get(t.owner)?.delete(t);
      this.#now = t.at;
      t.fn();
      await settle();
    }
    if (this.#now < until && Number.isFinite(until)) this.#now = until;
    return true;
  }

  /** Time of the next live task, or undefined. */
  next(): number | undefined {
    return this.#peek()?.at;
  }

  #peek(): Timer | undefined {
    while (this.#heap.length && !this.#heap[0]!.live) this.#pop();
    return this.#heap[0];
  }

  #less(a: Timer, b: Timer) {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  #push(t: Timer) {
    const h = this.#heap;
    h.push(t);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.#less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  #pop(): Timer | undefined {
    const h = this.#heap;
    const top = h[0];
    const last = h.pop()!;
    if (h.length) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.#less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.#less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}
