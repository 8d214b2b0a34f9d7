/**
 * The simulated cluster servers: a {@link ServerRPC} holding the allocs that live on other
 * nodes, answering blocking queries on virtual time, with faults. One view per host, so a
 * crashed host's pending queries die with it.
 * @module
 */
import type { ServerRPC } from '../actors/watchers/types.ts';
import { BerthError } from '../model/errors.ts';
import { isClientTerminalStatus } from '../model/status.ts';
import type { Allocation } from '../model/types.ts';
import type { Rng } from './random.ts';
import type { Scheduler } from './scheduler.ts';

/** How long a blocking query waits at most before answering unchanged (virtual ms). */
const MAX_QUERY_WAIT_MS = 300_000;

/** The servers' state, shared by every host. */
export class SimServers {
  readonly allocs = new Map<string, { alloc: Allocation; index: number }>();
  #index = 100;
  #waiters = new Set<() => void>();
  faultRate = 0.1;

  put(alloc: Allocation): void {
    this.allocs.set(alloc.id, { alloc, index: ++this.#index });
    for (const w of [...this.#waiters]) w();
  }

  terminal(id: string): boolean {
    const a = this.allocs.get(id)?.alloc;
    return !a || isClientTerminalStatus(a.clientStatus);
  }

  /** A host's RPC client: its timers belong to `owner`. */
  rpc(sched: Scheduler, rng: Rng, owner: string): ServerRPC {
    let n = 0;
    return {
      getAlloc: (req, signal) =>
        new Promise((resolve, reject) => {
          const r = rng.fork(`${owner}:rpc:${req.allocId}:${n++}`);
          const timers: unknown[] = [];
          const later = (ms: number, fn: () => void) => timers.push(sched.at(ms, fn, owner));
          const wake = () => answer();
          const finish = () => {
            this.#waiters.delete(wake);
            for (const t of timers) sched.cancel(t as never);
            signal.removeEventListener('abort', onAbort);
          };
          const onAbort = () => {
            finish();
            reject(signal.reason);
          };
          const answer = () => {
            finish();
            later(r.int(1, 100), () => {
              if (signal.aborted) return reject(signal.reason);
              if (r.chance(this.faultRate)) return reject(new BerthError('sim: rpc error: no cluster leader'));
              const e = this.allocs.get(req.allocId);
              resolve({ alloc: e ? structuredClone(e.alloc) : null, index: e?.index ?? this.#index });
            });
          };
          if (signal.aborted) return reject(signal.reason);
          signal.addEventListener('abort', onAbort, { once: true });
          const e = this.allocs.get(req.allocId);
          if (req.allowStale && req.minQueryIndex > 0 && e && e.index <= req.minQueryIndex) {
            this.#waiters.add(wake);
            later(MAX_QUERY_WAIT_MS, answer);
          } else answer();
        }),
      getNode: async () => ({ node: null }),
    };
  }
}
