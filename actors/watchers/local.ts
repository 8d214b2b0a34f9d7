/**
 * The local watcher (Nomad's `localPrevAlloc.Wait` on the previous runner's wait channel): waits
 * on the watched alloc's own runner through a listener on its broadcaster until that runner's
 * tasks are all dead. The client status alone is not enough: it says `failed` as soon as one task
 * failed, while a sibling is still being killed. No polling and no timers: it only awaits
 * `listener.next(signal)`.
 *
 * ```
 * listener() ──► alloc() done? ──yes──► released (terminated)
 *                    │ no
 *                    ▼
 *               next(signal) ──undefined──► released (listener-closed)
 *                    │ alloc
 *                    ├── terminated (complete/failed/lost) and every task dead ──► released (terminated)
 *                    └── otherwise (desired stop alone, failed with a sibling alive) ──► next(signal) again
 * ```
 * The listener is always closed, however the wait ends (released, aborted, failed).
 * @module
 */
import { isTerminated, tasksDead } from '../../model/status.ts';
import type { Allocation } from '../../model/types.ts';
import { BerthError } from '../../model/errors.ts';
import type { WatchFn, WatchOutcome } from './child.ts';
import type { PrevAllocSource } from './types.ts';

/** The watched runner is over: client-terminal with every task dead (its wait channel closed). */
const runnerDone = (a: Allocation) => isTerminated(a) && tasksDead(a.taskStates);

/**
 * Waits until the runner's alloc is terminated with every task dead, or its listener ends.
 * Rejects with `signal.reason` when `signal` aborts.
 * @example
 * const { reason } = await watchLocalAlloc(runner, AbortSignal.timeout(60_000));
 */
export async function watchLocalAlloc(source: PrevAllocSource, signal: AbortSignal): Promise<WatchOutcome> {
  const listener = source.listener(); // taken first: primed with the last sent alloc, misses nothing
  try {
    signal.throwIfAborted();
    const current = source.alloc();
    if (runnerDone(current)) return { reason: 'terminated', clientStatus: current.clientStatus };
    for (;;) {
      const alloc = await listener.next(signal);
      if (!alloc) return { reason: 'listener-closed' };
      if (runnerDone(alloc)) return { reason: 'terminated', clientStatus: alloc.clientStatus };
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
