/**
 * `allocWatcherLogic`: the group watcher (docs/lifecycle.md). The pure statechart
 * (`machines/watcher.machine.ts`) with its effects provided: the handle registration and the two
 * child logics.
 *
 * ```
 * await-previous                       allocWatcherLogic (input: AllocWatcherInput)
 * ├─ <previousAllocId>                 local (broadcaster) or remote (ServerRPC)
 * └─ <preemptedAllocId> …              one per key of preemptedRunners, each watching its own id
 * ```
 * @module
 */
import { realClock } from '../../model/clock.ts';
import { planWatch, watchHandleKey, watcherMachine } from '../../machines/watcher.machine.ts';
import { localWatcherLogic } from './local.ts';
import { registerWatchHandles } from './registry.ts';
import { remoteWatcherLogic } from './remote.ts';
import { DEFAULT_RETRY, type AllocWatcherInput } from './types.ts';

/**
 * Waits for an alloc's previous allocation and every allocation it preempted; see the module doc
 * of `machines/watcher.machine.ts`. Output: `{ previousNodeId?: string }`.
 * @example
 * const watcher = createActor(allocWatcherLogic, { input: { alloc, previousRunner, rpc } });
 * watcher.subscribe({ complete: () => console.log(watcher.getSnapshot().output), error: console.error });
 * watcher.start();
 */
export const allocWatcherLogic = watcherMachine.provide({
  actions: {
    registerHandles: ({ event, self }) => {
      const input = (event as unknown as { input: AllocWatcherInput }).input;
      const common = {
        bus: input.bus,
        clock: input.clock ?? realClock,
        random: input.random ?? Math.random,
        retry: input.retry ?? DEFAULT_RETRY,
      };
      for (const p of planWatch(input)) {
        const source = p.role === 'previous' ? input.previousRunner : input.preemptedRunners?.[p.watchedAllocId];
        registerWatchHandles(watchHandleKey(self.sessionId, p.watchedAllocId), {
          ...common,
          source: source ?? undefined,
          rpc: input.rpc,
        });
      }
    },
  },
  actors: { localWatcher: localWatcherLogic, remoteWatcher: remoteWatcherLogic },
});
