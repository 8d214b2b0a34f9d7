/**
 * `allocWatcherLogic`: the group watcher. The pure statechart (`machines/watcher.machine.ts`)
 * with its two effects provided: starting one child per watched alloc (outside the children map,
 * see `detached-children.ts`) and forgetting a finished one.
 *
 * ```
 * await-previous                       allocWatcherLogic (input: AllocWatcherInput)
 * ├─ <previousAllocId>                 local (broadcaster) or remote (ServerRPC)
 * └─ <preemptedAllocId> …              one per key of preemptedRunners, each watching its own id
 * ```
 * Each child gets its handles bound when it is created: no registry, nothing taken later.
 * @module
 */
import type { Actor, AnyActorRef } from 'xstate';
import { realClock } from '../../model/clock.ts';
import { watcherMachine, type WatcherContext } from '../../machines/watcher.machine.ts';
import { watcherChildLogic, type WatchFn, type WatchHandles } from './child.ts';
import { forgetDetachedChild, startDetachedChildren } from './detached-children.ts';
import { watchLocal } from './local.ts';
import { watchRemote } from './remote.ts';
import { DEFAULT_RETRY, type AllocWatcherInput } from './types.ts';

/** Where a group watcher's children find their handles. */
export type WatchSources = Omit<AllocWatcherInput, 'alloc'>;

/** Binds a watch function to the sources: the local runner is picked per child from its input. */
function bound(watch: WatchFn, sources: WatchSources, common: Omit<WatchHandles, 'source'>) {
  return watcherChildLogic((input, _h, signal) => {
    const source = input.role === 'previous' ? sources.previousRunner : sources.preemptedRunners?.[input.watchedAllocId];
    return watch(input, { ...common, ...(source ? { source } : {}) }, signal);
  }, common);
}

/**
 * The group watcher with its effects, its children's handles coming from `sourcesFor` (called
 * once, when the watcher starts watching).
 */
export function createWatcherLogic(sourcesFor: (self: AnyActorRef, context: WatcherContext) => WatchSources) {
  return watcherMachine.provide({
    actions: {
      startWatchers: ({ self, context }) => {
        const sources = sourcesFor(self, context);
        const common = {
          ...(sources.bus ? { bus: sources.bus } : {}),
          ...(sources.rpc ? { rpc: sources.rpc } : {}),
          clock: sources.clock ?? realClock,
          random: sources.random ?? Math.random,
          retry: sources.retry ?? DEFAULT_RETRY,
        };
        const local = bound(watchLocal, sources, common);
        const remote = bound(watchRemote, sources, common);
        startDetachedChildren(
          self,
          context.plan.map((p) => ({ id: p.watchedAllocId, logic: p.mode === 'local' ? local : remote, input: { allocId: context.allocId, ...p } })),
        );
      },
      reapChild: ({ self, event }) => forgetDetachedChild(self, event.actorId),
    },
  });
}

/**
 * Waits for an alloc's previous allocation and every allocation it preempted; see the module doc
 * of `machines/watcher.machine.ts`. Output: `{ previousNodeId?: string }`. Its handles are the
 * ones in its own input.
 * @example
 * const watcher = createActor(allocWatcherLogic, { input: { alloc, previousRunner, rpc } });
 * watcher.subscribe({ complete: () => console.log(watcher.getSnapshot().output), error: console.error });
 * watcher.start();
 */
export const allocWatcherLogic = createWatcherLogic((self) => (self as unknown as Actor<typeof watcherMachine>).options.input as AllocWatcherInput);
