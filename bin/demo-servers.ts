/**
 * The demo's stand-in for the cluster's servers: an in-memory ServerRPC that answers like Nomad's
 * `Alloc.GetAlloc` (blocking queries included) and rejects an empty or malformed id exactly as
 * Nomad's state store does, so the #10200 bug would show up as a hang here.
 * @module
 */
import type { ServerRPC } from '../actors/watchers/index.ts';
import type { Allocation } from '../model/types.ts';

/** An in-memory ServerRPC with a request log. */
export class DemoServers implements ServerRPC {
  readonly #allocs = new Map<string, Allocation>();
  #index = 100;
  readonly requests: string[] = [];
  readonly #waiters = new Set<() => void>();

  /** Stores (or replaces) an alloc as the servers see it. */
  put(alloc: Allocation): void {
    this.#allocs.set(alloc.id, alloc);
    this.#index++;
    for (const w of [...this.#waiters]) w();
  }

  async getAlloc(req: { allocId: string; minQueryIndex: number; allowStale: boolean }, signal: AbortSignal) {
    this.requests.push(req.allocId);
    if (req.allocId.length !== 36) throw new Error('alloc lookup failed: index error: UUID must be 36 characters');
    if (req.allowStale && this.#index <= req.minQueryIndex) {
      // A blocking query: wait for a change (or the caller giving up).
      await new Promise<void>((resolve, reject) => {
        const w = () => {
          this.#waiters.delete(w);
          resolve();
        };
        this.#waiters.add(w);
        signal.addEventListener(
          'abort',
          () => {
            this.#waiters.delete(w);
            reject(signal.reason);
          },
          { once: true },
        );
      });
    }
    return { alloc: this.#allocs.get(req.allocId) ?? null, index: this.#index };
  }

  async getNode() {
    return { node: null };
  }
}
