/**
 * The local watcher (Nomad's `localPrevAlloc.Wait`): waits on the watched alloc's own runner
 * through a listener on its broadcaster. No polling and no timers: it only awaits
 * `listener.next(signal)`.
 *
 * ```
 * listener() ──► alloc() terminated? ──yes──► released (terminated)
 *                    │ no
 *                    ▼
 *               next(signal) ──undefined──► released (listener-closed)
 *                    │ alloc
 *                    ├── terminated (complete/failed/lost) ──► released (terminated)
 *                    └── otherwise (desired stop alone too) ──► next(signal) again
 * ```
 * The listener is always closed, however the wait ends (released, aborted, failed).
 * @module
 */
import { isTerminated } from '../../model/status.ts';
import { BerthError } from '../../model/errors.ts';
import type { WatchFn, WatchOutcome } from './child.ts';
import type { PrevAllocSource } from './types.ts';

/**
 * Waits until the runner's alloc has a terminated client status or its listener ends.
 * Rejects with `signal.reason` when `signal` aborts.
 * @example
 * const { reason } = await watchLocalAlloc(runner, AbortSignal.timeout(60_000));
 */
export async function watchLocalAlloc(source: PrevAllocSource, signal: AbortSignal): Promise<WatchOutcome> {
  const listener = source.listener(); // taken first: primed with the last sent alloc, misses nothing
  try {
    signal.throwIfAborted();
    const current = source.alloc();
    if (isTerminated(current)) return { reason: 'terminated', clientStatus: current.clientStatus };
    for (;;) {
      const alloc = await listener.next(signal);
      if (!alloc) return { reason: 'listener-closed' };
      if (isTerminated(alloc)) return { reason: 'terminated', clientStatus: alloc.clientStatus };
    }
  } finally {
    listener.close();
  }
}

/** What the group watcher's child does for an alloc with a local runner. */
export const watchLocal: WatchFn = (input, handles, signal) => {
  if (!handles.source) {
    return Promise.reject(new BerthError(`alloc ${input.allocId}: no local runner for watched allocation ${input.watchedAllocId}`));
  }
  return watchLocalAlloc(handles.source, signal);
};
