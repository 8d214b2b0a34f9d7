/**
 * Where a watcher child finds its handles (runner, RPC client, bus, clock). The group watcher's
 * context and its children's inputs stay plain data; they carry a key
 * (`watchHandleKey(watcherSessionId, watchedAllocId)`) instead.
 *
 * Entries are take-once: the group registers them in its initial actions, and each child takes
 * (and so removes) its own entry one microtask after it starts (see child.ts). Nothing is left
 * behind whether the child then finishes, fails or is stopped.
 * @module
 */
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

const entries = new Map<string, WatchHandles>();

/** Registers the handles of one child. */
export function registerWatchHandles(key: string, handles: WatchHandles): void {
  entries.set(key, handles);
}

/** Takes (and removes) the handles of one child. */
export function takeWatchHandles(key: string): WatchHandles | undefined {
  const h = entries.get(key);
  if (h) entries.delete(key);
  return h;
}

/** How many registered handles no child has taken yet (0 at rest; for leak checks). */
export function pendingWatchHandles(): number {
  return entries.size;
}
