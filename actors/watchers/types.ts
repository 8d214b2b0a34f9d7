/**
 * Types of the previous/preempted allocation watchers (see docs/lifecycle.md, "Waiting for
 * previous and preempted allocations").
 * @module
 */
import type { AllocListener } from '../../bus/broadcaster.ts';
import type { Bus } from '../../bus/bus.ts';
import type { Clock } from '../../model/clock.ts';
import type { Allocation } from '../../model/types.ts';
import type { AllocDirHandle } from '../allocdir/handle.ts';

import type { WatchRequest } from '../../model/watch.ts';

export type { AllocWatcherOutput, WatchChildInput, WatchMode, WatchPlanEntry, WatchReleaseReason, WatchResult, WatchRole } from '../../model/watch.ts';

/** How a client asks the cluster's servers; `NomadHttpRPC` is one implementation. */
export interface ServerRPC {
  /**
   * Reads one allocation. With `allowStale` and `minQueryIndex > 0` this is a blocking query: it
   * returns once the alloc's index exceeds `minQueryIndex` (or the server's wait elapses).
   * `alloc` is null when the servers no longer have it (garbage collected).
   */
  getAlloc(req: { allocId: string; minQueryIndex: number; allowStale: boolean }, signal: AbortSignal): Promise<{ alloc: Allocation | null; index: number }>;
  /** Looks up a node's HTTP address (where a remote migration fetches the previous alloc's data); null when unknown. */
  getNode(req: { nodeId: string }, signal: AbortSignal): Promise<{ node: { id: string; httpAddr: string; tlsEnabled?: boolean } | null }>;
}

/** What a local alloc runner offers a watcher. */
export interface PrevAllocSource {
  readonly allocId: string;
  readonly allocDir: AllocDirHandle;
  /** The current client view. */
  alloc(): Allocation;
  /** A new listener on its broadcaster (primed with the last alloc it sent). */
  listener(): AllocListener;
}

/** Retry delay of a remote watcher: `baseMs + random() * staggerMs`. */
export interface RetryPolicy {
  baseMs: number;
  staggerMs: number;
}

/** Nomad's `getRemoteRetryIntv`: 30 s plus a uniform stagger in [0, 30 s). */
export const DEFAULT_RETRY: Readonly<RetryPolicy> = Object.freeze({ baseMs: 30_000, staggerMs: 30_000 });

/** Input of `allocWatcherLogic`. */
export interface AllocWatcherInput extends WatchRequest {
  /** The new alloc that must wait. Its `id` is the `allocId` of every bus message. */
  alloc: Allocation;
  /** Local runner of `alloc.previousAllocation`. */
  previousRunner?: PrevAllocSource;
  /** Evicted alloc id -> its local runner, or null (watched through `rpc`). */
  preemptedRunners?: Record<string, PrevAllocSource | null>;
  /** For every watched alloc with no local runner. */
  rpc?: ServerRPC;
  /** Default {@link DEFAULT_RETRY}. */
  retry?: RetryPolicy;
  /** Where `watcher.waiting`, `watcher.retry` and `watcher.released` go. */
  bus?: Bus;
  /** Schedules retry delays; default the real clock. */
  clock?: Clock;
  /** Uniform [0, 1) source for the retry stagger; default `Math.random`. */
  random?: () => number;
}
