/**
 * The remote watcher (Nomad's `remotePrevAlloc.Wait`): asks the servers about the watched alloc,
 * by its own id, until it no longer holds the new alloc back.
 *
 * ```
 * getAlloc(id, minQueryIndex 0, allowStale false)          first: a consistent read
 *   ├─ error "Unknown allocation" / "Permission denied" ──► released (no node id: no migration)
 *   ├─ other error ──► watcher.retry, wait base + random()*stagger, ask again
 *   ├─ allowStale && index < minQueryIndex (stale) ──► wait the same delay, ask again
 *   ├─ alloc null (garbage collected) ──► released
 *   ├─ client status complete/failed/lost ──► released, node id recorded
 *   ├─ client status unknown ──► released, node id recorded
 *   └─ otherwise: index > minQueryIndex ⇒ allowStale true, minQueryIndex = index
 *                 (the next call is a blocking query); ask again
 * ```
 * Every wait and every request is cancelled by `signal`.
 * @module
 */
import { BerthError, PermissionDeniedError, UnknownAllocationError } from '../../model/errors.ts';
import { isTerminated } from '../../model/status.ts';
import type { WatchFn, WatchOutcome } from './child.ts';
import type { ServerRPC } from './types.ts';
import { backOff, type RetryOptions } from './retry.ts';
import { errorText } from '../../model/error-text.ts';

/** Options of {@link watchRemoteAlloc}. */
export interface RemoteWatchOptions extends RetryOptions {
  rpc: ServerRPC;
}

/**
 * A final answer from the servers: the alloc is unknown to them, or we may not read it. Matches
 * the classes and, since servers reached over HTTP lose them, the message text.
 */
export function finalRemoteError(err: unknown): 'unknown-allocation' | 'permission-denied' | undefined {
  if (err instanceof UnknownAllocationError) return 'unknown-allocation';
  if (err instanceof PermissionDeniedError) return 'permission-denied';
  const text = errorText(err);
  if (text.includes('Unknown allocation')) return 'unknown-allocation';
  if (text.includes('Permission denied')) return 'permission-denied';
  return undefined;
}

/**
 * Waits until the servers report `watchedAllocId` terminated, `unknown`, garbage collected, unknown
 * or forbidden. Rejects with `signal.reason` when `signal` aborts; never rejects otherwise.
 * @example
 * const { reason, nodeId } = await watchRemoteAlloc(prevId, { rpc, signal });
 */
export async function watchRemoteAlloc(watchedAllocId: string, opts: RemoteWatchOptions): Promise<WatchOutcome> {
  const { rpc, signal } = opts;
  let minQueryIndex = 0;
  let allowStale = false;
  for (;;) {
    signal.throwIfAborted();
    let resp: Awaited<ReturnType<ServerRPC['getAlloc']>>;
    try {
      resp = await rpc.getAlloc({ allocId: watchedAllocId, minQueryIndex, allowStale }, signal);
    } catch (err) {
      signal.throwIfAborted();
      const final = finalRemoteError(err);
      if (final) return { reason: final };
      await backOff(opts, errorText(err));
      continue;
    }
    signal.throwIfAborted();
    if (allowStale && resp.index < minQueryIndex) {
      await backOff(opts, `stale response: index ${resp.index} is below minQueryIndex ${minQueryIndex}`);
      continue;
    }
    const alloc = resp.alloc;
    if (!alloc) return { reason: 'garbage-collected' };
    if (isTerminated(alloc)) return { reason: 'terminated', clientStatus: alloc.clientStatus, nodeId: alloc.nodeId };
    if (alloc.clientStatus === 'unknown') return { reason: 'unknown-status', clientStatus: alloc.clientStatus, nodeId: alloc.nodeId };
    if (resp.index > minQueryIndex) {
      allowStale = true;
      minQueryIndex = resp.index;
    }
  }
}

/** What the group watcher's child does for an alloc with no local runner. */
export const watchRemote: WatchFn = (input, handles, signal) => {
  const { rpc, bus } = handles;
  if (!rpc) {
    return Promise.reject(new BerthError(`alloc ${input.allocId}: no server RPC to watch allocation ${input.watchedAllocId}`));
  }
  const { allocId, watchedAllocId } = input;
  return watchRemoteAlloc(watchedAllocId, {
    rpc,
    signal,
    retry: handles.retry,
    clock: handles.clock,
    random: handles.random,
    onRetry: bus && ((error, delayMs) => bus.publish('watcher.retry', { allocId, watchedAllocId, error, delayMs })),
  });
};
