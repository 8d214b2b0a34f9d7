/** Watchers of previous and preempted allocations (docs/lifecycle.md). @module */
export * from './types.ts';
export { allocWatcherLogic, createWatcherLogic, type WatchSources } from './group.ts';
export { watchLocal, watchLocalAlloc } from './local.ts';
export { watchRemote, watchRemoteAlloc, finalRemoteError, type RemoteWatchOptions } from './remote.ts';
export { detachedChildIds as watcherChildren } from './detached-children.ts';
export { watcherMachine, planWatch, WatchSourceMissingError, InvalidWatchedAllocError, type WatcherContext } from '../../machines/watcher.machine.ts';
