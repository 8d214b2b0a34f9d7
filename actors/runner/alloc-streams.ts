/**
 * The streams one alloc serves (`runner.logs`, `runner.fs.stream`), ended together when the alloc
 * is destroyed: each is aborted and its generator returned, so its fd and watcher are released
 * even when its consumer stopped asking for more (a stalled page, a forgotten iterator).
 * @module
 */
import { setMaxListeners } from 'node:events';

/** See the module doc. */
export class AllocStreams {
  readonly #ctl = new AbortController();

  constructor() {
    // One listener per open stream (AbortSignal.any): hundreds of followers are fine.
    setMaxListeners(0, this.#ctl.signal);
  }
  readonly #open = new Set<AsyncIterator<Buffer>>();
  #ending: Promise<void> | undefined;

  /** Aborted once {@link AllocStreams.endAll} ran. */
  get signal(): AbortSignal {
    return this.#ctl.signal;
  }

  /**
   * A stream made by `make` with a signal that aborts on the caller's `signal` or on
   * {@link AllocStreams.endAll}, whichever comes first. After endAll it is empty.
   */
  track(make: (signal: AbortSignal) => AsyncIterable<Buffer>, signal?: AbortSignal): AsyncIterable<Buffer> {
    const open = this.#open;
    const ended = this.#ctl.signal;
    return {
      [Symbol.asyncIterator](): AsyncIterator<Buffer> {
        if (ended.aborted) return { next: async () => ({ done: true, value: undefined }) };
        const inner = make(signal ? AbortSignal.any([signal, ended]) : ended)[Symbol.asyncIterator]();
        open.add(inner);
        const done = (r: IteratorResult<Buffer>) => {
          if (r.done) open.delete(inner);
          return r;
        };
        return {
          next: () => inner.next().then(done),
          return: async () => {
            open.delete(inner);
            return (await inner.return?.()) ?? { done: true, value: undefined };
          },
        };
      },
    };
  }

  /** Aborts every stream and waits until each has released what it held. Idempotent. */
  endAll(): Promise<void> {
    this.#ending ??= (async () => {
      this.#ctl.abort();
      const its = [...this.#open];
      this.#open.clear();
      await Promise.all(its.map((it) => it.return?.().catch(() => undefined)));
    })();
    return this.#ending;
  }
}
