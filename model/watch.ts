/**
 * Plain data of the previous/preempted allocation watchers: what is watched and how, what a
 * child watcher reports. The watcher chart (`machines/watcher.machine.ts`) works on these only;
 * the handles (runners, the RPC client, the bus) stay on the effect side (`actors/watchers/`).
 * @module
 */
import type { Allocation } from './types.ts';

/** Why the watched alloc is being waited on. */
export type WatchRole = 'previous' | 'preempted';
/** How it is watched: its local runner's broadcaster, or the servers. */
export type WatchMode = 'local' | 'remote';

/** Why a watched alloc stopped holding the new alloc back (the `watcher.released` reasons). */
export type WatchReleaseReason = 'terminated' | 'unknown-status' | 'garbage-collected' | 'unknown-allocation' | 'permission-denied' | 'listener-closed';

/** One watched allocation, as planned from the input. Plain data. */
export interface WatchPlanEntry {
  watchedAllocId: string;
  role: WatchRole;
  mode: WatchMode;
}

/** Input of one child watcher (plain data). */
export interface WatchChildInput extends WatchPlanEntry {
  /** The new alloc that waits. */
  allocId: string;
}

/** Output of one child watcher. */
export interface WatchResult {
  watchedAllocId: string;
  reason: WatchReleaseReason;
  /** The client status last seen, when one was seen. */
  clientStatus?: string;
  /** The node the watched alloc ran on, learnt by a remote watcher (terminated or unknown). */
  nodeId?: string;
}

/** Output of the group watcher. */
export interface AllocWatcherOutput {
  /** Node id of the previous alloc, when a remote watcher learnt it (needed for migration). */
  previousNodeId?: string;
}

/**
 * What the watcher chart needs to plan: the waiting alloc, and for each watched alloc whether a
 * local runner exists (any truthy value), and whether the servers can be asked (`rpc`). The
 * effect side's `AllocWatcherInput` (with the runners and the RPC client themselves) is one; the
 * alloc chart passes flags.
 */
export interface WatchRequest {
  alloc: Allocation;
  previousRunner?: unknown;
  preemptedRunners?: Record<string, unknown>;
  rpc?: unknown;
}
