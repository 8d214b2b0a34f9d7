/**
 * Blocking queries on one index: each table remembers the index of its last change, and a
 * reader waiting for `?index=N` sits in one waiter set until a table it reads moves past N or
 * its own deadline passes. The set holds one timer in all, armed for the earliest deadline, so
 * a thousand waiters cost no more timers than one.
 * @module
 */
import type { Table } from './types.ts';

/**
 * Tells of a reader gone away without an AbortSignal: called with `gone` (call it when the reader
 * leaves), returns what stops listening. A parked HTTP query uses its response's `close` event.
 */
export type GoneWatch = (gone: () => void) => () => void;

interface Waiter {
  tables: readonly Table[];
  minIndex: number;
  deadline: number;
  resolve: () => void;
}

/** The agent's indexes and the readers waiting on them. */
export class IndexWaiters {
  #index = 1;
  readonly #tables = new Map<Table, number>();
  readonly #waiters = new Set<Waiter>();
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Infinity;

  constructor(start = 1) {
    this.#index = Math.max(1, start);
  }

  /** The latest index over every table. */
  get index(): number {
    return this.#index;
  }

  /** How many readers are waiting now. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** Whether the set holds a timer now (at most one, whatever the number of waiters). */
  get timers(): number {
    return this.#timer ? 1 : 0;
  }

  /** The index of the last change to any of `tables` (at least 1, as Nomad never answers 0). */
  indexOf(tables: readonly Table[]): number {
    let max = 1;
    for (const t of tables) max = Math.max(max, this.#tables.get(t) ?? 1);
    return max;
  }

  /** Sets a table's index when loading state (no waiter is woken). */
  seed(table: Table, index: number): void {
    this.#tables.set(table, Math.max(this.#tables.get(table) ?? 0, index));
    this.#index = Math.max(this.#index, index);
  }

  /** The next index, for a change about to be written. */
  next(): number {
    return ++this.#index;
  }

  /** Records that `tables` changed at `index` and wakes every waiter now satisfied. */
  changed(tables: readonly Table[], index: number = this.#index): void {
    for (const t of tables) this.#tables.set(t, index);
    for (const w of this.#waiters) {
      if (w.tables.some((t) => tables.includes(t)) && this.indexOf(w.tables) > w.minIndex) this.#release(w);
    }
  }

  /**
   * Resolves once one of `tables` has an index above `minIndex`, or at `deadline` (ms since the
   * epoch), or when the reader goes away (`signal` aborts, or `gone` from a {@link GoneWatch});
   * never rejects.
   */
  wait(tables: readonly Table[], minIndex: number, deadline: number, signal?: AbortSignal | GoneWatch): Promise<void> {
    const aborted = typeof signal === 'object' && signal.aborted;
    if (this.indexOf(tables) > minIndex || deadline <= Date.now() || aborted) return Promise.resolve();
    return new Promise((resolve) => {
      let unwatch: (() => void) | undefined;
      const w: Waiter = {
        tables,
        minIndex,
        deadline,
        resolve: () => {
          unwatch?.();
          resolve();
        },
      };
      let goneEarly = false;
      const onGone = () => {
        if (this.#waiters.has(w)) this.#release(w);
        else goneEarly = true;
      };
      if (typeof signal === 'function') unwatch = signal(onGone);
      else if (signal) {
        signal.addEventListener('abort', onGone, { once: true });
        unwatch = () => signal.removeEventListener('abort', onGone);
      }
      // A watch may tell at once that the reader has already gone.
      if (goneEarly) return w.resolve();
      this.#waiters.add(w);
      if (deadline < this.#timerAt) this.#arm(deadline);
    });
  }

  /** Wakes every waiter (the agent is stopping). */
  close(): void {
    for (const w of [...this.#waiters]) this.#release(w);
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }

  #release(w: Waiter): void {
    if (!this.#waiters.delete(w)) return;
    w.resolve();
    if (this.#waiters.size === 0 && this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#timerAt = Infinity;
    }
  }

  #arm(at: number): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, at - Date.now()));
  }

  #expire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const w of [...this.#waiters]) {
      if (w.deadline <= now) this.#release(w);
      else next = Math.min(next, w.deadline);
    }
    if (next !== Infinity && this.#waiters.size > 0) this.#arm(next);
  }
}
