/** Watchers of previous and preempted allocations (docs/lifecycle.md). @module */
export * from './types.ts';
export { allocWatcherLogic } from './group.ts';
export { localWatcherLogic, watchLocalAlloc } from './local.ts';
export { remoteWatcherLogic, watchRemoteAlloc, finalRemoteError, type RemoteWatchOptions } from './remote.ts';
export { pendingWatchHandles } from './registry.ts';
export {
  watcherMachine,
  planWatch,
  watcherChildren,
  WatchSourceMissingError,
  InvalidWatchedAllocError,
  type WatcherContext,
} from '../../machines/watcher.machine.ts';
