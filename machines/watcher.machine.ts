/**
 * The group watcher: makes a new allocation wait for its previous allocation and for every
 * allocation it preempted (Nomad's `client/allocwatcher` group watcher).
 *
 * ```
 *            input: WatchRequest (plain: the alloc, which watched allocs are local, rpc or not)
 *                 │  context: the plan and counters (planWatch throws WatchSourceMissingError here)
 *                 ▼
 *   ┌──────────── watching ─────────────┐  entry: startWatchers (one child per planned alloc:
 *   │ xstate.done.actor.<id>:           │         id = watched alloc id, parent = watcher)
 *   │   recordRelease (pending - 1),    │
 *   │   reapChild (forget <id>: O(1))   │
 *   └───────────────┬───────────────────┘
 *                   │ always [allReleased]   (at once when nothing is watched)
 *                   ▼
 *               released (final)  output: { previousNodeId? }
 * ```
 *
 * Pure: the decisions (what to watch, when all are released, which node the previous alloc was
 * on) are here; `startWatchers` and `reapChild` are effects provided by `actors/watchers/`,
 * which keeps the children outside `snapshot.children` for speed (see
 * `actors/watchers/detached-children.ts`). Context holds plain data only.
 * @module
 */
import { assign, setup, type DoneActorEvent } from 'xstate';
import { BerthError } from '../model/errors.ts';
import type { AllocWatcherOutput, WatchPlanEntry, WatchRequest, WatchResult } from '../model/watch.ts';

export type { AllocWatcherOutput, WatchChildInput, WatchMode, WatchPlanEntry, WatchReleaseReason, WatchResult, WatchRole } from '../model/watch.ts';

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
  /** What to watch and how, in start order. */
  plan: WatchPlanEntry[];
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
export function planWatch(input: WatchRequest): WatchPlanEntry[] {
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

/** An effect the watcher chart names was not provided (use `allocWatcherLogic`). */
export class WatcherEffectMissingError extends BerthError {}

const notProvided = (name: string) => () => {
  throw new WatcherEffectMissingError(`watcher effect "${name}" not provided: use allocWatcherLogic from actors/watchers`);
};

/**
 * The pure group-watcher statechart. Use `allocWatcherLogic` (actors/watchers/group.ts), which
 * provides `startWatchers` and `reapChild`.
 */
export const watcherMachine = setup({
  types: {
    context: {} as WatcherContext,
    input: {} as WatchRequest,
    output: {} as AllocWatcherOutput,
    events: {} as DoneActorEvent<WatchResult>,
  },
  actions: {
    /** Effect: creates and starts one child per entry of `context.plan`, parent = this watcher. */
    startWatchers: notProvided('startWatchers'),
    /** One child released: O(1). */
    recordRelease: assign(({ context, event }) => {
      const out = event.output;
      const fromPrevious = event.actorId === context.previousAllocId;
      return fromPrevious && out?.nodeId ? { pending: context.pending - 1, previousNodeId: out.nodeId } : { pending: context.pending - 1 };
    }),
    /** Effect: forgets the finished (so already stopped) child so the watcher does not keep it: O(1). */
    reapChild: notProvided('reapChild'),
  },
  guards: {
    allReleased: ({ context }) => context.pending <= 0,
  },
}).createMachine({
  id: 'await-previous',
  context: ({ input }) => {
    const plan = planWatch(input);
    return { allocId: input.alloc.id, previousAllocId: input.alloc.previousAllocation || null, plan, watching: plan.length, pending: plan.length };
  },
  initial: 'watching',
  states: {
    watching: {
      entry: 'startWatchers',
      always: { guard: 'allReleased', target: 'released' },
      on: {
        'xstate.done.actor.*': { actions: ['recordRelease', 'reapChild'] },
      },
    },
    released: { type: 'final' },
  },
  output: ({ context }) => (context.previousNodeId ? { previousNodeId: context.previousNodeId } : {}),
});
