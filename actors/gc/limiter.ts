/**
 * A counting semaphore for promises: at most `n` calls of {@link Limiter.run} are in flight, the
 * rest wait in call order. The garbage collector bounds its parallel destroys with one
 * (Nomad's `gc_parallel_destroys`).
 * @module
 */

/** Runs async work with bounded parallelism. */
export class Limiter {
  readonly #max: number;
  #active = 0;
  readonly #queue: Array<() => void> = [];

  /** `max` below 1 is taken as 1, so work always makes progress (as Nomad does). */
  constructor(max: number) {
    this.#max = Math.max(1, Math.floor(max));
  }

  /** Calls in flight right now. */
  get active(): number {
    return this.#active;
  }

  /**
   * Runs `fn` once a slot is free; the slot is released when its promise settles.
   * @example
   * const limit = new Limiter(2);
   * await Promise.all(ids.map((id) => limit.run(() => destroy(id))));
   */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#active >= this.#max) await new Promise<void>((wake) => this.#queue.push(wake));
    else this.#active++;
    try {
      return await fn();
    } finally {
      // Hand the slot straight to the next waiter, so a newcomer cannot jump the queue.
      const next = this.#queue.shift();
      if (next) next();
      else this.#active--;
    }
  }
}
