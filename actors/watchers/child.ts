/**
 * The shape every watcher child shares: take its handles from the registry, announce
 * `watcher.waiting`, wait, announce `watcher.released`, output a {@link WatchResult}. A plain
 * `fromPromise` actor, so the inspector shows it and stopping it aborts its signal.
 *
 * Ordering: xstate starts the children of a machine's initial state (`StateMachine.start`) before
 * it runs the deferred initial actions, among them `registerHandles`. Both happen synchronously
 * inside `actor.start()`, so a child takes its handles one microtask after it starts. It always
 * takes them, even when already stopped, so the registry never keeps an entry.
 * @module
 */
import { fromPromise } from 'xstate';
import { BerthError } from '../../model/errors.ts';
import type { WatchChildInput, WatchResult } from '../../machines/watcher.machine.ts';
import { takeWatchHandles, type WatchHandles } from './registry.ts';

/** What a watch function reports; the child adds `watchedAllocId`. */
export type WatchOutcome = Omit<WatchResult, 'watchedAllocId'>;

/** Builds a child logic around `watch`. */
export function watcherChildLogic(watch: (input: WatchChildInput, handles: WatchHandles, signal: AbortSignal) => Promise<WatchOutcome>) {
  return fromPromise<WatchResult, WatchChildInput>(async ({ input, signal }) => {
    await Promise.resolve(); // let the group's initial actions register the handles (see above)
    const handles = takeWatchHandles(input.key);
    signal.throwIfAborted();
    if (!handles) {
      throw new BerthError(`alloc ${input.allocId}: no handles registered to watch allocation ${input.watchedAllocId} (key ${input.key})`);
    }
    const { allocId, watchedAllocId, role, mode } = input;
    handles.bus?.publish('watcher.waiting', { allocId, watchedAllocId, role, mode });
    const outcome = await watch(input, handles, signal);
    handles.bus?.publish('watcher.released', { allocId, watchedAllocId, ...outcome });
    return { watchedAllocId, ...outcome };
  });
}
