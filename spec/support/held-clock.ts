/**
 * A clock for specs of periodic work: real time for every delay except one period (`heldMs`),
 * whose timers wait until the test fires them. Its `now()` never repeats, so "older" is total.
 */
import { realClock, type Clock } from '../../model/clock.ts';

type Held = { held: number };
const isHeld = (h: unknown): h is Held => typeof h === 'object' && h !== null && 'held' in h;

/** See the module comment. */
export class HeldPeriodClock implements Clock {
  readonly #timers = new Map<number, () => void>();
  readonly #onHeld = new Set<() => void>();
  #seq = 0;
  #last = 0;
  /** Every held delay scheduled so far. */
  scheduledHeld = 0;

  constructor(readonly heldMs: number) {}

  now(): number {
    this.#last = Math.max(this.#last + 1, Date.now());
    return this.#last;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    if (ms !== this.heldMs) return realClock.setTimeout(fn, ms);
    const id = ++this.#seq;
    this.#timers.set(id, fn);
    this.scheduledHeld++;
    for (const l of [...this.#onHeld]) l();
    return { held: id } satisfies Held;
  }

  clearTimeout(handle: unknown): void {
    if (isHeld(handle)) this.#timers.delete(handle.held);
    else realClock.clearTimeout(handle);
  }

  /** Held timers waiting to fire. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Resolves when the next held timer is scheduled. */
  nextHeld(): Promise<void> {
    return new Promise((resolve) => {
      const l = () => {
        this.#onHeld.delete(l);
        resolve();
      };
      this.#onHeld.add(l);
    });
  }

  /**
   * Fires the held timers, then resolves once a new one is scheduled: for a periodic job, once
   * the round the timer started has finished and the next is due.
   */
  async fire(): Promise<void> {
    const fns = [...this.#timers.values()];
    this.#timers.clear();
    const next = this.nextHeld();
    for (const fn of fns) fn();
    await next;
  }
}
