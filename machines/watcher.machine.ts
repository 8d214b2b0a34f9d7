/**
 * The group watcher: makes a new allocation wait for its previous allocation and for every
 * allocation it preempted (Nomad's `client/allocwatcher` group watcher; docs/lifecycle.md).
 *
 * ```
 *            xstate.init (input: WatcherMachineInput)
 *                 │  context: counts only (planWatch throws WatchSourceMissingError here)
 *                 ▼
 *   ┌──────────── watching ─────────────┐  entry: registerHandles, startWatchers
 *   │ one child per watched alloc,      │  (child id = watched alloc id, parent = watcher)
 *   │ xstate.done.actor.<id>:           │
 *   │   recordRelease (pending - 1),    │
 *   │   reapChild (forget <id>: O(1))   │
 *   └───────────────┬───────────────────┘
 *                   │ always [allReleased]   (at once when nothing is watched)
 *                   ▼
 *               released (final)  output: { previousNodeId? }
 * ```
 *
 * Pure: every effect is named here and implemented elsewhere. `registerHandles` (an action) and
 * the child logic `localWatcher` / `remoteWatcher` are provided by `actors/watchers/group.ts`.
 * Context holds plain counters only; runners, the RPC client, the bus and the clock never enter
 * it. Children reach them through a registry keyed by `watchHandleKey`.
 *
 * Children are reaped on their done event so a finished watcher holds no children, and per
 * child work is O(1) (a counter, no scans).
 *
 * Why the children are not in `snapshot.children`: in xstate 5 every spawn and every stopChild
 * copies the parent's children map, and stopping a parent with K children is O(K^2). With K
 * victims stopping in the same tick, reaping them one by one cost O(K^2) on the path from the
 * last victim's stop to the new alloc running (2.4 s at K = 1,000). So each child is created
 * with `createActor(logic, { parent: self, id: watchedAllocId, input })` and started from
 * `startWatchers`: the inspector still shows it under the watcher (same system, `_parent` is the
 * watcher), its done and error events still reach the watcher, and reaping is a map delete.
 * The watcher stops its own live children whenever it ends (stopped by its parent, done, or
 * failed), through an observer on itself. {@link watcherChildren} lists the live ones.
 * @module
 */
import { assign, createActor, fromPromise, setup, type AnyActorLogic, type AnyActorRef, type DoneActorEvent } from 'xstate';
import { BerthError } from '../model/errors.ts';
import type { Allocation } from '../model/types.ts';

/**
 * What the chart reads of its input. `actors/watchers`' `AllocWatcherInput` is one; the runners
 * and the RPC stay opaque here (the chart only asks whether each is there), so the chart knows
 * nothing of the effects.
 */
export interface WatcherMachineInput {
  alloc: Allocation;
  previousRunner?: unknown;
  preemptedRunners?: Record<string, unknown>;
  rpc?: unknown;
}

/** Why the watched alloc is being waited on. */
export type WatchRole = 'previous' | 'preempted';
/** How it is watched: its local runner's broadcaster, or the servers. */
export type WatchMode = 'local' | 'remote';

/** Why a watched alloc stopped holding the new alloc back (the `watcher.released` reasons). */
export type WatchReleaseReason =
  | 'terminated'
  | 'unknown-status'
  | 'garbage-collected'
  | 'unknown-allocation'
  | 'permission-denied'
  | 'listener-closed';

/** One watched allocation, as planned from the input. Plain data. */
export interface WatchPlanEntry {
  watchedAllocId: string;
  role: WatchRole;
  mode: WatchMode;
}

/** Input of one child watcher. Plain data: handles are looked up by `key`. */
export interface WatchChildInput extends WatchPlanEntry {
  /** The new alloc that waits. */
  allocId: string;
  /** Registry key of this child's handles (`watchHandleKey`). */
  key: string;
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

/** The group watcher's context: plain counters. */
export interface WatcherContext {
  /** The new alloc that waits. */
  allocId: string;
  /** `alloc.previousAllocation`, or null. */
  previousAllocId: string | null;
  /** How many allocs are watched. */
  watching: number;
  /** How many have not been released yet. */
  pending: number;
  previousNodeId?: string;
}

/** A watched alloc has no local runner and there is no `rpc` to ask the servers about it. */
export class WatchSourceMissingError extends BerthError {
  constructor(
    readonly allocId: string,
    readonly watchedAllocIds: string[],
  ) {
    super(
      `alloc ${allocId}: no local runner and no server RPC to watch allocation${watchedAllocIds.length === 1 ? '' : 's'} ` +
        `${watchedAllocIds.join(', ')}; pass a runner for it or a ServerRPC as \`rpc\``,
    );
  }
}

/** The input names an allocation id that cannot be watched (empty). */
export class InvalidWatchedAllocError extends BerthError {}

/**
 * Which allocations to watch, and how: the previous alloc (when `alloc.previousAllocation` is set)
 * then each key of `preemptedRunners`, each watching exactly its own id (never
 * `alloc.previousAllocation` for a preempted one: Nomad #10200). An id listed twice is watched once.
 * @throws WatchSourceMissingError when a watched alloc has no local runner and there is no `rpc`.
 * @throws InvalidWatchedAllocError for an empty preempted id.
 */
export function planWatch(input: WatcherMachineInput): WatchPlanEntry[] {
  const plan: WatchPlanEntry[] = [];
  const seen = new Set<string>();
  const previous = input.alloc.previousAllocation;
  if (previous) {
    plan.push({ watchedAllocId: previous, role: 'previous', mode: input.previousRunner ? 'local' : 'remote' });
    seen.add(previous);
  }
  const preempted = input.preemptedRunners;
  if (preempted) {
    for (const id of Object.keys(preempted)) {
      if (!id) throw new InvalidWatchedAllocError(`alloc ${input.alloc.id}: preemptedRunners has an empty allocation id`);
      if (seen.has(id)) continue;
      seen.add(id);
      plan.push({ watchedAllocId: id, role: 'preempted', mode: preempted[id] ? 'local' : 'remote' });
    }
  }
  if (!input.rpc) {
    const missing = plan.filter((p) => p.mode === 'remote').map((p) => p.watchedAllocId);
    if (missing.length) throw new WatchSourceMissingError(input.alloc.id, missing);
  }
  return plan;
}

/** Registry key of one child's handles: unique per watcher actor and watched alloc. */
export function watchHandleKey(watcherSessionId: string, watchedAllocId: string): string {
  return `${watcherSessionId}/${watchedAllocId}`;
}

const notProvided = fromPromise<WatchResult, WatchChildInput>(() =>
  Promise.reject(new BerthError('watcher child logic not provided: use allocWatcherLogic from actors/watchers')),
);

/** Live children of each watcher actor, by watched alloc id. */
const liveChildren = new WeakMap<AnyActorRef, Map<string, AnyActorRef>>();

/** Ids of the watcher's children still watching (finished ones are reaped at once). */
export function watcherChildren(watcher: AnyActorRef): string[] {
  return [...(liveChildren.get(watcher)?.keys() ?? [])];
}

type InternalRef = AnyActorRef & { logic: { implementations: { actors: Record<string, AnyActorLogic> } }; _stop(): void; _parent?: AnyActorRef; observers: Set<unknown> };

function startChildren(self: AnyActorRef, input: WatcherMachineInput, allocId: string): void {
  const me = self as InternalRef;
  const kids = new Map<string, AnyActorRef>();
  liveChildren.set(self, kids);
  const stopAll = () => {
    const left = [...kids.values()];
    kids.clear();
    for (const c of left) (c as InternalRef)._stop(); // aborts its signal: the wait ends, its listener closes
  };
  // Runs when the watcher completes, is stopped (by its parent) or fails.
  me.subscribe({
    complete: stopAll,
    error: (err: unknown) => {
      stopAll();
      // An observer with an error handler would silence xstate's report of an error nobody
      // else observes on a root watcher: report it as xstate does.
      if (!me._parent && me.observers.size <= 1) setTimeout(() => { throw err; });
    },
  });
  const logics = me.logic.implementations.actors;
  for (const p of planWatch(input)) {
    const childInput: WatchChildInput = { ...p, allocId, key: watchHandleKey(self.sessionId, p.watchedAllocId) };
    kids.set(p.watchedAllocId, createActor(logics[p.mode === 'local' ? 'localWatcher' : 'remoteWatcher']!, { parent: self, id: p.watchedAllocId, input: childInput }));
  }
  for (const c of [...kids.values()]) c.start();
}

function initInput(event: { type: string }): WatcherMachineInput {
  return (event as unknown as { input: WatcherMachineInput }).input;
}

/**
 * The pure group-watcher statechart. Use `allocWatcherLogic` (actors/watchers/group.ts), which
 * provides `registerHandles`, `localWatcher` and `remoteWatcher`.
 */
export const watcherMachine = setup({
  types: {
    context: {} as WatcherContext,
    input: {} as WatcherMachineInput,
    output: {} as AllocWatcherOutput,
    events: {} as DoneActorEvent<WatchResult>,
  },
  actors: { localWatcher: notProvided, remoteWatcher: notProvided },
  actions: {
    /** Effect (provided): puts each child's handles in the registry before the children start. */
    registerHandles: () => {},
    /** Creates and starts one child per watched alloc, outside `snapshot.children` (see module doc). */
    startWatchers: ({ event, self, context }) => startChildren(self, initInput(event), context.allocId),
    /** One child released: O(1). */
    recordRelease: assign(({ context, event }) => {
      const out = event.output;
      const fromPrevious = event.actorId === context.previousAllocId;
      return fromPrevious && out?.nodeId ? { pending: context.pending - 1, previousNodeId: out.nodeId } : { pending: context.pending - 1 };
    }),
    /** Forgets the finished (so already stopped) child so the watcher does not keep it: O(1). */
    reapChild: ({ event, self }) => void liveChildren.get(self)?.delete(event.actorId),
  },
  guards: {
    allReleased: ({ context }) => context.pending <= 0,
  },
}).createMachine({
  id: 'await-previous',
  context: ({ input }) => {
    const watching = planWatch(input).length;
    return { allocId: input.alloc.id, previousAllocId: input.alloc.previousAllocation || null, watching, pending: watching };
  },
  initial: 'watching',
  states: {
    watching: {
      entry: ['registerHandles', 'startWatchers'],
      always: { guard: 'allReleased', target: 'released' },
      on: {
        'xstate.done.actor.*': { actions: ['recordRelease', 'reapChild'] },
      },
    },
    released: { type: 'final' },
  },
  output: ({ context }) => (context.previousNodeId ? { previousNodeId: context.previousNodeId } : {}),
});
