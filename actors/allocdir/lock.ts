/**
 * In-process async locks used to make alloc-dir operations safe for concurrent use.
 * @module
 */

interface Waiter {
  exclusive: boolean;
  wake: () => void;
}

/**
 * A fair (FIFO) read/write lock. Shared holders (task builds, snapshots, restores) run
 * together; an exclusive holder (alloc build, destroy, move) runs alone. A queued exclusive
 * request blocks later shared ones, so a destroy is not starved by a stream of builds.
 *
 * @example
 * const lock = new RwLock();
 * await lock.shared(async () => readStuff());
 * await lock.exclusive(async () => removeStuff());
 */
export class RwLock {
  #readers = 0;
  #writer = false;
  #queue: Waiter[] = [];

  /** Runs `fn` holding the lock in shared mode. */
  shared<T>(fn: () => Promise<T>): Promise<T> {
    return this.#run(false, fn);
  }

  /** Runs `fn` holding the lock alone. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.#run(true, fn);
  }

  async #run<T>(exclusive: boolean, fn: () => Promise<T>): Promise<T> {
    await this.#acquire(exclusive);
    try {
      return await fn();
    } finally {
      if (exclusive) this.#writer = false;
      else this.#readers--;
      this.#drain();
    }
  }

  #acquire(exclusive: boolean): Promise<void> {
    if (this.#queue.length === 0 && this.#canTake(exclusive)) {
      this.#take(exclusive);
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#queue.push({ exclusive, wake: resolve }));
  }

  #canTake(exclusive: boolean): boolean {
    return exclusive ? !this.#writer && this.#readers === 0 : !this.#writer;
  }

  #take(exclusive: boolean): void {
    if (exclusive) this.#writer = true;
    else this.#readers++;
  }

  #drain(): void {
    while (this.#queue.length > 0 && this.#canTake(this.#queue[0].exclusive)) {
      const w = this.#queue.shift()!;
      this.#take(w.exclusive);
      w.wake();
    }
  }
}

/** A FIFO mutex: `run` calls execute one at a time, in call order. */
export class Mutex {
  #tail: Promise<unknown> = Promise.resolve();

  /** Runs `fn` after every earlier `run` call has settled. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(fn, fn);
    this.#tail = next.catch(() => undefined);
    return next;
  }
}
