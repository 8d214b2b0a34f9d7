/**
 * The shape every watcher child shares: announce `watcher.waiting`, wait, announce
 * `watcher.released`, output a {@link WatchResult}. A plain `fromPromise` actor, so the
 * inspector shows it and stopping it aborts its signal. Its handles are bound when the group
 * watcher starts it: no registry, nothing to take later.
 * @module
 */
import { fromPromise } from 'xstate';
import type { WatchChildInput, WatchResult } from '../../model/watch.ts';
import type { Bus } from '../../bus/bus.ts';
import type { Clock } from '../../model/clock.ts';
import type { PrevAllocSource, RetryPolicy, ServerRPC } from './types.ts';

/** Everything one child watcher needs besides its plain input. */
export interface WatchHandles {
  /** The local runner (local mode). */
  source?: PrevAllocSource;
  /** The servers (remote mode). */
  rpc?: ServerRPC;
  bus?: Bus;
  clock: Clock;
  random: () => number;
  retry: RetryPolicy;
}

/** What a watch function reports; the child adds `watchedAllocId`. */
export type WatchOutcome = Omit<WatchResult, 'watchedAllocId'>;

/** A watch function: waits for one watched alloc with the given handles. */
export type WatchFn = (input: WatchChildInput, handles: WatchHandles, signal: AbortSignal) => Promise<WatchOutcome>;

/** Builds a child logic around `watch`, bound to `handles`. */
export function watcherChildLogic(watch: WatchFn, handles: WatchHandles) {
  return fromPromise<WatchResult, WatchChildInput>(async ({ input, signal }) => {
    const { allocId, watchedAllocId, role, mode } = input;
    handles.bus?.publish('watcher.waiting', { allocId, watchedAllocId, role, mode });
    const outcome = await watch(input, handles, signal);
    handles.bus?.publish('watcher.released', { allocId, watchedAllocId, ...outcome });
    return { watchedAllocId, ...outcome };
  });
}
