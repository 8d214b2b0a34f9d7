/**
 * One async job at a time per key, jobs of different keys side by side: the cgroup manager's
 * per-alloc turn. A key's entry is dropped once its last job settles, so it holds nothing for an
 * alloc that is gone.
 * @module
 */

/** Runs async jobs in call order per key. */
export class KeyedQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Jobs queued or running, by key (for specs and diagnostics). */
  get size(): number {
    return this.#tails.size;
  }

  /**
   * Runs `fn` once every earlier job of `key` has settled (fulfilled or not), and settles as it does.
   * @example
   * const q = new KeyedQueue();
   * await Promise.all([q.run('a', setUp), q.run('a', join), q.run('b', setUp)]); // a's in turn, b's beside them
   */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    const job = prev.then(fn, fn);
    const tail = job.catch(() => {});
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return job;
  }
}
