/**
 * The alloc machine: one allocation (Nomad's AllocRunner) as a pure statechart. Effects are actors
 * referenced by name and provided by the runtime (`actors/runner/`); context is plain data.
 *
 * ```
 *  pending ──► waiting-prev ──────────────► running ──────────────► stopping ─────────► destroyed
 *  build dir   waiting ─► migrating        prerun ─► tasks          killing (leader,     (final)
 *              (watchers)  (data)           (hooks)   (task-*)       mains, sidecars)
 *                                                                   poststop ─► postrun ─► stopped
 *  update(terminal) from pending / waiting-prev / running ────────► stopping
 *  destroy from anywhere ──────────────────────────────────────────► stopping.destroying ─► destroyed
 * ```
 * @module
 */
import { assign, enqueueActions, setup, type AnyActorLogic, type PromiseActorLogic } from 'xstate';
import { isServerTerminal } from '../model/status.ts';
import type { Allocation, TaskEvent, TaskState } from '../model/types.ts';
import { groupKillEvent, killPhases, type GroupKillEvent } from './policy/kill-order.ts';
import { gateOpen, nextCoordinatorState, type CoordinatorState } from './policy/lifecycle-gates.ts';
import { appendEvent, taskEvent } from './policy/task-events.ts';
import type { TaskRole } from './policy/task-roles.ts';
import type { TaskMachineEvent, TaskMachineInput } from './task.machine.ts';
import type { TaskHandle } from '../model/driver-types.ts';

/** Per-task static settings the runtime computes once (plain data). */
export type TaskSettings = Omit<TaskMachineInput, 'initialState' | 'gateOpen' | 'now'>;

/** Input of the alloc machine (plain data). */
export interface AllocMachineInput {
  alloc: Allocation;
  roles: TaskRole[];
  tasks: Record<string, TaskSettings>;
  now: number;
  /** Bound on `waiting-prev.waiting` (ms); undefined waits as long as it takes. */
  prevAllocWaitTimeoutMs?: number;
  /** Skip the watcher when nothing is watched (no previous alloc, no preempted allocs). */
  hasWatched: boolean;
  /** Restoring a saved alloc: task name -> saved driver handle (plain JSON). */
  restoredHandles?: Record<string, TaskHandle>;
}

/** The alloc machine's context (plain data). */
export interface AllocContext {
  allocId: string;
  alloc: Allocation;
  roles: TaskRole[];
  tasks: Record<string, TaskSettings>;
  taskStates: Record<string, TaskState>;
  /** Total events ever appended per task (the bus publishes the new ones). */
  eventSeq: Record<string, number>;
  coordinator: CoordinatorState;
  spawned: boolean;
  killEvent?: GroupKillEvent;
  /** Kill phases still to run, and the tasks of the current phase. */
  killQueue: string[][];
  killCurrent: string[];
  /** Bumps whenever the client view (task states, alloc) changes. */
  version: number;
  setupError?: string;
  previousNodeId?: string;
  prevAllocWaitTimeoutMs?: number;
  hasWatched: boolean;
  now: number;
  restoredHandles?: Record<string, TaskHandle>;
}

/** Events the alloc machine accepts. */
export type AllocMachineEvent =
  | { type: 'update'; alloc: Allocation; time: number }
  | { type: 'destroy'; time: number }
  | { type: 'task.state'; taskName: string; state: TaskState; eventSeq: number }
  /** Forwards an event to one task's actor (restart, signal events). */
  | { type: 'toTask'; taskName: string; event: TaskMachineEvent }
  /** Alloc-level restart: reset the coordinator and re-run every task, dead ones too. */
  | { type: 'restartAll'; time: number; reason?: string };

/** Actor id of a task: `task-<allocId>-<taskName>`. */
export const taskActorId = (allocId: string, taskName: string) => `task-${allocId}-${taskName}`;

type Ctx = AllocContext;

const isDead = (c: Ctx, name: string) => c.taskStates[name]?.state === 'dead';

function markSetupFailed(c: Ctx, reason: string, time: number): Partial<Ctx> {
  const taskStates: Record<string, TaskState> = {};
  const eventSeq = { ...c.eventSeq };
  for (const [name, s] of Object.entries(c.taskStates)) {
    const ev = taskEvent('Setup Failure', time, { displayMessage: reason, details: { setup_error: reason, fails_task: 'true', kill_reason: 'Failed Restoring Task' } });
    const next = appendEvent(s, ev);
    taskStates[name] = { ...next, state: 'dead', finishedAt: s.finishedAt ?? time };
    eventSeq[name] = (eventSeq[name] ?? 0) + 1;
  }
  return { taskStates, eventSeq, setupError: reason, version: c.version + 1, now: time };
}

/** Tasks that never started (stop before `running`) become dead, not failed. */
function markUnstartedDead(c: Ctx, time: number): Partial<Ctx> {
  if (c.spawned) return {};
  const taskStates: Record<string, TaskState> = {};
  for (const [name, s] of Object.entries(c.taskStates)) taskStates[name] = s.state === 'dead' ? s : { ...s, state: 'dead', finishedAt: s.finishedAt ?? time };
  return { taskStates, version: c.version + 1 };
}

/** The allocation statechart. Provide the named actors to run it (see actors/runner). */
export const allocMachine = setup({
  types: {
    context: {} as AllocContext,
    input: {} as AllocMachineInput,
    events: {} as AllocMachineEvent,
  },
  actors: {
    buildAllocDir: null as unknown as PromiseActorLogic<void, { allocId: string }>,
    awaitPrevious: null as unknown as AnyActorLogic,
    migrateData: null as unknown as PromiseActorLogic<void, { allocId: string; previousNodeId?: string }>,
    runHooks: null as unknown as PromiseActorLogic<void, { allocId: string; kind: 'prerun' | 'postrun' | 'destroy' }>,
    task: null as unknown as AnyActorLogic,
  },
  delays: {
    prevAllocWait: ({ context }) => context.prevAllocWaitTimeoutMs ?? 2 ** 31 - 1,
  },
  guards: {
    nothingWatched: ({ context }) => !context.hasWatched,
    hasWaitTimeout: ({ context }) => context.prevAllocWaitTimeoutMs !== undefined,
    stopRequested: ({ context }) => isServerTerminal(context.alloc),
    allMainDead: ({ context }) => context.roles.filter((r) => !r.poststop).every((r) => isDead(context, r.name)),
    mustKillGroup: ({ context }) => !!groupKillEvent(context.roles, context.taskStates),
    killDone: ({ context }) => context.killQueue.length === 0 && context.killCurrent.every((n) => isDead(context, n)),
    poststopDone: ({ context }) => !context.spawned || context.roles.filter((r) => r.poststop).every((r) => isDead(context, r.name)),
    allDead: ({ context }) => !context.spawned || context.roles.every((r) => isDead(context, r.name)),
  },
  actions: {
    recordTaskState: assign(({ context, event }) => {
      if (event.type !== 'task.state') return {};
      return {
        taskStates: { ...context.taskStates, [event.taskName]: event.state },
        eventSeq: { ...context.eventSeq, [event.taskName]: event.eventSeq },
        version: context.version + 1,
      };
    }),
    applyUpdate: assign(({ context, event }) => (event.type === 'update' ? { alloc: event.alloc, version: context.version + 1, now: event.time } : {})),
    spawnTasks: enqueueActions(({ context, enqueue }) => {
      for (const r of context.roles) {
        const settings = context.tasks[r.name]!;
        const restoredHandle = context.restoredHandles?.[r.name];
        const input: TaskMachineInput = { ...settings, initialState: context.taskStates[r.name]!, gateOpen: gateOpen(context.coordinator, r.stage), now: context.now, ...(restoredHandle ? { restoredHandle } : {}) };
        enqueue.spawnChild('task', { id: taskActorId(context.allocId, r.name), input });
      }
      enqueue.assign({ spawned: true });
    }),
    /** Recomputes the lifecycle coordinator and tells tasks whose gate changed. */
    updateGates: enqueueActions(({ context, enqueue }) => {
      const next = nextCoordinatorState(context.coordinator, context.roles, context.taskStates);
      if (next === context.coordinator) return;
      if (context.spawned) {
        for (const r of context.roles) {
          const was = gateOpen(context.coordinator, r.stage);
          const now = gateOpen(next, r.stage);
          if (was !== now) enqueue.sendTo(taskActorId(context.allocId, r.name), { type: 'gate', open: now } satisfies TaskMachineEvent);
        }
      }
      enqueue.assign({ coordinator: next });
    }),
    chooseKillEvent: assign(({ context }) => ({ killEvent: groupKillEvent(context.roles, context.taskStates) })),
    planStopKills: assign(({ context }) => ({ killQueue: context.spawned ? killPhases(context.roles) : [], killCurrent: [] })),
    planDestroyKills: assign(({ context }) => ({
      killQueue: context.spawned ? [...killPhases(context.roles), context.roles.filter((r) => r.poststop).map((r) => r.name)].filter((p) => p.length) : [],
      killCurrent: [],
    })),
    /** Starts the next kill phase once every task of the current one is dead. */
    advanceKills: enqueueActions(({ context, enqueue }) => {
      let queue = context.killQueue;
      let current = context.killCurrent;
      while (current.every((n) => isDead(context, n)) && queue.length) {
        current = queue[0]!.filter((n) => !isDead(context, n));
        queue = queue.slice(1);
        const ke = context.killEvent;
        const reason: TaskEvent | undefined = ke
          ? taskEvent(ke.type, context.now, { details: ke.failedSibling ? { failed_sibling: ke.failedSibling } : {} })
          : undefined;
        for (const n of current) enqueue.sendTo(taskActorId(context.allocId, n), { type: 'kill', time: context.now, reason } satisfies TaskMachineEvent);
      }
      enqueue.assign({ killQueue: queue, killCurrent: current });
    }),
    forwardToTask: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'toTask' || !context.spawned) return;
      enqueue.sendTo(taskActorId(context.allocId, event.taskName), event.event);
    }),
    restartAllTasks: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'restartAll' || !context.spawned) return;
      enqueue.assign({ coordinator: 'init' as CoordinatorState });
      for (const r of context.roles) {
        enqueue.sendTo(taskActorId(context.allocId, r.name), { type: 'gate', open: false } satisfies TaskMachineEvent);
        enqueue.sendTo(taskActorId(context.allocId, r.name), { type: 'restartAll', time: event.time, reason: event.reason } satisfies TaskMachineEvent);
      }
    }),
    setupFailed: assign(({ context, event }) => {
      const err = (event as { error?: unknown }).error;
      const msg = err instanceof Error ? err.message : String(err);
      return markSetupFailed(context, `failed to setup alloc: ${msg}`, context.now);
    }),
    markUnstartedDead: assign(({ context }) => markUnstartedDead(context, context.now)),
    stampNow: assign(({ event, context }) => ('time' in event && typeof event.time === 'number' ? { now: Math.max(context.now, event.time) } : {})),
  },
}).createMachine({
  id: 'alloc',
  context: ({ input }) => {
    const taskStates: Record<string, TaskState> = {};
    const eventSeq: Record<string, number> = {};
    for (const r of input.roles) {
      taskStates[r.name] = input.alloc.taskStates?.[r.name] ?? { state: 'pending', failed: false, restarts: 0, events: [taskEvent('Received', input.now)] };
      eventSeq[r.name] = taskStates[r.name]!.events.length;
    }
    return {
      allocId: input.alloc.id,
      alloc: input.alloc,
      roles: input.roles,
      tasks: input.tasks,
      taskStates,
      eventSeq,
      // A restored group resumes at prestart, as Nomad's coordinator Restore does.
      coordinator: input.restoredHandles ? 'prestart' : 'init',
      spawned: false,
      killQueue: [],
      killCurrent: [],
      version: 0,
      prevAllocWaitTimeoutMs: input.prevAllocWaitTimeoutMs,
      hasWatched: input.hasWatched,
      now: input.now,
      ...(input.restoredHandles ? { restoredHandles: input.restoredHandles } : {}),
    };
  },
  initial: 'pending',
  on: {
    update: [
      { guard: ({ event }) => isServerTerminal(event.alloc), target: '.stopping', actions: 'applyUpdate' },
      { actions: 'applyUpdate' },
    ],
    destroy: { target: '.stopping.destroying', actions: 'stampNow' },
    'task.state': { actions: ['recordTaskState', 'updateGates'] },
    toTask: { actions: 'forwardToTask' },
  },
  states: {
    pending: {
      always: { guard: 'stopRequested', target: 'stopping' },
      invoke: {
        id: 'alloc-dir',
        src: 'buildAllocDir',
        input: ({ context }) => ({ allocId: context.allocId }),
        onDone: 'waiting-prev',
        onError: { target: 'stopping', actions: 'setupFailed' },
      },
    },
    'waiting-prev': {
      initial: 'waiting',
      states: {
        waiting: {
          always: { guard: 'nothingWatched', target: 'migrating' },
          invoke: {
            id: 'await-previous',
            src: 'awaitPrevious',
            input: ({ context }: { context: AllocContext }) => ({ allocId: context.allocId }),
            onDone: {
              target: 'migrating',
              actions: assign(({ event }) => ({ previousNodeId: (event.output as { previousNodeId?: string } | undefined)?.previousNodeId })),
            },
            onError: { target: '#alloc.stopping', actions: 'setupFailed' },
          },
          after: {
            prevAllocWait: {
              guard: 'hasWaitTimeout',
              target: '#alloc.stopping',
              actions: assign(({ context }) =>
                markSetupFailed(context, `failed to setup alloc: timed out after ${context.prevAllocWaitTimeoutMs}ms waiting for previous allocations to stop`, context.now + (context.prevAllocWaitTimeoutMs ?? 0)),
              ),
            },
          },
        },
        migrating: {
          invoke: {
            id: 'migrate',
            src: 'migrateData',
            input: ({ context }) => ({ allocId: context.allocId, previousNodeId: context.previousNodeId }),
            onDone: '#alloc.running',
            onError: { target: '#alloc.stopping', actions: 'setupFailed' },
          },
        },
      },
    },
    running: {
      initial: 'prerun',
      states: {
        prerun: {
          invoke: {
            id: 'prerun-hooks',
            src: 'runHooks',
            input: ({ context }) => ({ allocId: context.allocId, kind: 'prerun' as const }),
            onDone: { target: 'tasks', actions: ['updateGates', 'spawnTasks'] },
            onError: { target: '#alloc.stopping', actions: 'setupFailed' },
          },
        },
        tasks: {
          always: [
            { guard: 'allMainDead', target: '#alloc.stopping' },
            { guard: 'mustKillGroup', target: '#alloc.stopping', actions: 'chooseKillEvent' },
          ],
          on: {
            restartAll: { actions: ['restartAllTasks', 'updateGates'] },
          },
        },
      },
    },
    stopping: {
      initial: 'killing',
      entry: 'markUnstartedDead',
      // Already stopping: a later update only replaces the alloc (no re-entry, no hooks).
      on: { update: { actions: 'applyUpdate' } },
      states: {
        killing: {
          entry: ['planStopKills', 'advanceKills'],
          on: { 'task.state': { actions: ['recordTaskState', 'updateGates', 'advanceKills'] } },
          always: { guard: 'killDone', target: 'poststop' },
        },
        poststop: {
          entry: 'updateGates',
          always: { guard: 'poststopDone', target: 'postrun' },
        },
        postrun: {
          invoke: {
            id: 'postrun-hooks',
            src: 'runHooks',
            input: ({ context }) => ({ allocId: context.allocId, kind: 'postrun' as const }),
            onDone: 'stopped',
            onError: 'stopped',
          },
        },
        stopped: {},
        destroying: {
          initial: 'killing',
          on: { destroy: {}, update: { actions: 'applyUpdate' } },
          states: {
            killing: {
              entry: ['markUnstartedDead', 'planDestroyKills', 'advanceKills'],
              on: { 'task.state': { actions: ['recordTaskState', 'advanceKills'] } },
              always: { guard: 'allDead', target: 'hooks' },
            },
            hooks: {
              invoke: {
                id: 'destroy-hooks',
                src: 'runHooks',
                input: ({ context }) => ({ allocId: context.allocId, kind: 'destroy' as const }),
                onDone: '#alloc.destroyed',
                onError: '#alloc.destroyed',
              },
            },
          },
        },
      },
    },
    destroyed: {
      type: 'final',
      on: { destroy: {}, update: {} },
    },
  },
});
