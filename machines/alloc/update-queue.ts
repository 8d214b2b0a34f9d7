/**
 * The alloc's update queue (Nomad's AllocRunner.Update): updates apply one at a time, and while
 * the update hooks of the last one run, the newest pending update waits in a single slot (older
 * ones are dropped, see `pickQueuedUpdate`). "Update hooks running" is this chart's `hooking`
 * state, not a flag of the alloc chart.
 *
 * ```
 *  idle ──(hooks.started)──► hooking ──(hooks.done)──► idle (the slot's update, if any, is applied)
 *  update in idle: apply it now        update in hooking: hold it in the slot
 * ```
 *
 * The alloc chart spawns it as its child `updates` (only when the host has update hooks: without
 * them nothing ever waits) and forwards it each update it does not drop; this chart answers
 * with the update itself, marked {@link ReleasedUpdateEvent | released}, when it is to be applied. The alloc chart decides
 * whether that update runs hooks (a stop or a reconnect runs none) and says so with
 * `hooks.started`; it reports the hooks' end (done or failed) with `hooks.done`.
 * @module
 */
import { assign, sendParent, setup } from 'xstate';
import type { Allocation } from '../../model/types.ts';
import { pickQueuedUpdate } from '../policy/update-queue.ts';

/** The queue's context: the one update waiting for the running update hooks (plain data). */
export interface UpdateQueueContext {
  queued?: Allocation;
}

/** Events the queue accepts (all from the alloc chart). */
export type UpdateQueueEvent =
  /** An update the alloc chart did not drop as stale. */
  | { type: 'update'; alloc: Allocation; time: number }
  /** The update just applied runs the update hooks. */
  | { type: 'hooks.started' }
  /** The update hooks ended (done or failed) at the alloc chart's `time`. */
  | { type: 'hooks.done'; time: number };

/** The queue's answer to the alloc chart: this update's turn has come, apply it now. */
export interface ReleasedUpdateEvent {
  type: 'update';
  alloc: Allocation;
  time: number;
  released: true;
}

/** The update queue chart (pure: it only holds data and sends events to its parent). */
export const updateQueueMachine = setup({
  types: { context: {} as UpdateQueueContext, events: {} as UpdateQueueEvent },
  actions: {
    apply: sendParent(({ event }): ReleasedUpdateEvent => {
      const e = event as Extract<UpdateQueueEvent, { type: 'update' }>;
      return { type: 'update', alloc: e.alloc, time: e.time, released: true };
    }),
    hold: assign(({ context, event }) => ({ queued: pickQueuedUpdate(context.queued, (event as Extract<UpdateQueueEvent, { type: 'update' }>).alloc) })),
    // The slot's update is applied at the time the hooks ended (the alloc chart's clock).
    release: sendParent(({ context, event }): ReleasedUpdateEvent => ({
      type: 'update',
      alloc: context.queued!,
      time: (event as { time: number }).time,
      released: true,
    })),
    clear: assign({ queued: undefined }),
  },
  guards: {
    holding: ({ context }) => context.queued !== undefined,
  },
}).createMachine({
  id: 'update-queue',
  context: {},
  initial: 'idle',
  states: {
    idle: {
      on: { update: { actions: 'apply' }, 'hooks.started': 'hooking' },
    },
    hooking: {
      on: {
        update: { actions: 'hold' },
        'hooks.done': [{ guard: 'holding', target: 'idle', actions: ['release', 'clear'] }, { target: 'idle' }],
      },
    },
  },
});
