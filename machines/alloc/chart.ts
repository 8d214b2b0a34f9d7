/**
 * The alloc chart: one allocation (Nomad's AllocRunner) as a pure statechart, states and
 * transitions only. What each action does is a pure function in `reducers.ts`; its data is in
 * `context.ts`; effects are actors referenced by name and provided by the runtime
 * (`actors/runner/`).
 *
 * ```
 *  pending ──► waiting-prev ──────────────► running ──────────────► stopping ─────────► destroyed
 *  build dir   waiting ─► migrating        prerun ─► tasks          killing (leader,     (final)
 *              (watchers)  (data)           (hooks)   (task-*)       mains, sidecars)
 *                                                                   poststop ─► postrun ─► stopped
 *  update(terminal) from pending / waiting-prev / running ────────► stopping
 *  destroy from anywhere ──────────────────────────────────────────► stopping.destroying ─► destroyed
 * ```
 * Updates before `stopping` go through the child `updates` (`update-queue.ts`, only with update
 * hooks): it hands each back (`released`) when no update hooks run, holding the newest meanwhile.
 * @module
 */
import { missingActor } from '../missing-actor.ts';
import { assign, enqueueActions, not, setup, stopChild, type PromiseActorLogic } from 'xstate';
import { AllocDirInaccessibleError } from '../../model/errors.ts';
import { isServerTerminal } from '../../model/status.ts';
import type { AllocState } from '../../model/alloc-state.ts';
import type { WatchRequest } from '../../model/watch.ts';
import { groupKillEvent } from '../policy/kill-order.ts';
import { isReconnect } from '../policy/reconnect.ts';
import { skipsShutdownDelay } from '../policy/shutdown-delay.ts';
import { taskActorId, type MigrateDataInput, type AllocContext, type AllocMachineEvent, type AllocMachineInput, type RunHooksInput } from './context.ts';
import { hooksOf, killPipeline, runHooksThen } from './kill-pipeline.ts';
import * as R from './reducers.ts';
import { isDead, type Step } from './reducers.ts';
import { updateQueueMachine } from './update-queue.ts';

type Ctx = AllocContext;
type Ev = AllocMachineEvent;

/** Actor id of the update queue child (`update-queue.ts`). */
const UPDATES = 'updates';

/** The few enqueue calls a {@link Step} needs (xstate's own type is generic over the whole setup). */
interface Enqueue {
  assign(patch: Partial<Ctx>): void;
  sendTo(to: string, event: unknown): void;
  spawnChild(src: string, opts: { id: string; input: unknown }): void;
}

/** Applies a reducer's {@link Step}: spawn, send, timer, hooks, update queue, assign (in that order). */
const run = (reduce: (c: Ctx, e: Ev) => Step) =>
  enqueueActions<Ctx, Ev, undefined, Ev, never, never, never, never, never>(({ context, event, enqueue: q }) => {
    const enqueue = q as unknown as Enqueue;
    const step = reduce(context, event);
    for (const input of step.spawn ?? []) enqueue.spawnChild('task', { id: taskActorId(context.allocId, input.taskName), input });
    for (const [task, ev] of step.send ?? []) enqueue.sendTo(taskActorId(context.allocId, task), ev);
    if (step.timer && 'spawn' in step.timer) enqueue.spawnChild('maxRunTimer', { id: 'max-run', input: { deadline: step.timer.spawn } });
    else if (step.timer) enqueue.sendTo('max-run', { type: 'arm', deadline: step.timer.arm });
    if (step.hooks) enqueue.spawnChild('runHooks', { id: `${step.hooks}-hooks`, input: { allocId: context.allocId, kind: step.hooks } });
    if (step.updates) enqueue.sendTo(UPDATES, step.updates);
    if (step.patch) enqueue.assign(step.patch);
  });

/** Assigns what a pure reducer returns. */
const set = (reduce: (c: Ctx, e: Ev) => Partial<Ctx>) => assign<Ctx, Ev, undefined, Ev, never>(({ context, event }) => reduce(context, event));

/** While running: the group stops when its main tasks are dead, or a task's end kills it. */
const GROUP_ENDS = [
  { guard: 'allMainDead', target: '#alloc.stopping' },
  { guard: 'mustKillGroup', target: '#alloc.stopping', actions: 'chooseKillEvent' },
] as const;

/** max_run_duration runs out while waiting or running: the alloc stops, complete. */
const MAX_RUN = {
  entry: 'armMaxRun',
  exit: 'disarmMaxRun',
  on: { 'maxRunDuration.elapsed': { guard: 'maxRunDue', target: '#alloc.stopping', actions: 'maxRunExceeded' } },
} as const;

/** The allocation statechart. Provide the named actors to run it (see actors/runner). */
export const allocMachine = setup({
  types: {
    context: {} as AllocContext,
    input: {} as AllocMachineInput,
    events: {} as AllocMachineEvent,
  },
  actors: {
    // Placeholders: the runtime provides the real logic with `.provide()`; unprovided, they fail
    // with a MissingActorError.
    buildAllocDir: missingActor<PromiseActorLogic<void, { allocId: string; restoring?: boolean }>>('alloc', 'buildAllocDir'),
    awaitPrevious: missingActor('alloc', 'awaitPrevious'),
    migrateData: missingActor<PromiseActorLogic<void, MigrateDataInput>>('alloc', 'migrateData'),
    runHooks: missingActor<PromiseActorLogic<void, RunHooksInput>>('alloc', 'runHooks'),
    maxRunTimer: missingActor('alloc', 'maxRunTimer'),
    task: missingActor('alloc', 'task'),
    // Pure: the chart's own, never provided by the runtime.
    updateQueue: updateQueueMachine,
  },
  delays: {
    poststopBound: ({ context }) => context.maxKillTimeoutMs,
    groupShutdownDelay: ({ context }) => context.groupShutdownDelayMs,
    prevAllocWait: ({ context }) => context.prevAllocWaitTimeoutMs ?? 2 ** 31 - 1,
  },
  guards: {
    nothingWatched: ({ context }) => !context.hasWatched,
    hasWaitTimeout: ({ context }) => context.prevAllocWaitTimeoutMs !== undefined,
    stopRequested: ({ context }) => isServerTerminal(context.alloc),
    arrivedTerminal: ({ context }) => context.arrivedTerminal,
    destroyRequested: ({ context }) => context.destroyRequested,
    /** An update waits its turn in the update queue (only with update hooks; one it released does not). */
    mustQueue: ({ context, event }) => context.hasUpdateHooks && event.type === 'update' && !event.released,
    terminalUpdate: ({ event }) => event.type === 'update' && isServerTerminal(event.alloc),
    /** Older than the alloc applied (Nomad's client drops those): listeners never go back. */
    staleUpdate: ({ context, event }) => R.isStaleUpdate(context, event),
    allMainDead: ({ context }) => context.roles.filter((r) => !r.poststop).every((r) => isDead(context, r.name)),
    mustKillGroup: ({ context }) => !!groupKillEvent(context.roles, context.taskStates),
    killDone: ({ context }) => context.killQueue.length === 0 && context.killCurrent.every((n) => isDead(context, n)),
    /** Wait the group's shutdown_delay: there is one, it is not skipped, and a task still runs. */
    groupDelayDue: ({ context }) =>
      context.spawned && context.groupShutdownDelayMs > 0 && !context.delaysSkipped && context.roles.some((r) => !r.poststop && !isDead(context, r.name)),
    delaysSkipped: ({ context }) => context.delaysSkipped,
    /** A group restart waits the group's shutdown_delay first (Nomad's group services hook in PreTaskRestart). */
    restartDelayDue: ({ context }) =>
      context.groupShutdownDelayMs > 0 && !context.delaysSkipped && context.roles.some((r) => !r.poststop && context.taskStates[r.name]?.state === 'running'),
    needsPreKill: ({ context }) => context.spawned && !context.preKillDone,
    // Nomad's Run calls postrun whether or not it ran the tasks (an alloc that arrived terminal too).
    needsPostrun: ({ context }) => (context.spawned || context.arrivedTerminal) && !context.postrunDone,
    /** The restored alloc's dir is gone (not any other build failure: that is a setup failure). */
    dirInaccessible: ({ event }) => (event as { error?: unknown }).error instanceof AllocDirInaccessibleError,
    reconnect: ({ context, event }) => event.type === 'update' && isReconnect(context.alloc, event.alloc),
    skipsDelays: ({ event }) => event.type === 'update' && skipsShutdownDelay(event.alloc),
    maxRunDue: ({ context, event }) =>
      event.type === 'maxRunDuration.elapsed' &&
      context.maxRunDeadline !== undefined &&
      event.deadline === context.maxRunDeadline &&
      event.time >= context.maxRunDeadline,
    poststopDone: ({ context }) => !context.spawned || context.roles.filter((r) => r.poststop).every((r) => isDead(context, r.name)),
    allDead: ({ context }) => !context.spawned || context.roles.every((r) => isDead(context, r.name)),
  },
  actions: {
    recordTaskState: set(R.recordTaskState),
    applyUpdate: set(R.applyUpdate),
    queueUpdate: run(R.queueUpdate),
    startUpdateHooks: run(R.startUpdateHooks),
    updateHooksDone: run(R.updateHooksDone),
    // Without update hooks nothing ever waits: no queue child (an idle child per alloc costs memory).
    startUpdateQueue: enqueueActions(({ context, enqueue }) => {
      if (context.hasUpdateHooks) enqueue.spawnChild('updateQueue', { id: UPDATES });
    }),
    spawnTasks: run(R.spawnTasks),
    spawnRestoredTasks: run(R.spawnRestoredTasks),
    updateGates: run(R.updateGates),
    updateStoppingGates: run(R.updateStoppingGates),
    chooseKillEvent: set(R.chooseKillEvent),
    planPoststopKills: set(R.planPoststopKills),
    planStopKills: set(R.planStopKills),
    planDestroyKills: set(R.planDestroyKills),
    advanceKills: run(R.advanceKills),
    forwardToTask: run(R.forwardToTask),
    setupFailed: set(R.setupFailed),
    waitTimedOut: set(R.waitTimedOut),
    markUnstartedDead: set(R.markUnstartedDead),
    markPreKillDone: assign({ preKillDone: true }),
    armMaxRun: run(R.armMaxRun),
    disarmMaxRun: enqueueActions(({ enqueue }) => {
      enqueue(stopChild('max-run'));
      enqueue.assign({ maxRunTimer: 'closed' });
    }),
    restoreFailed: set(R.restoreFailed),
    noteSkipDelays: set(R.noteSkipDelays),
    markPostrunDone: assign({ postrunDone: true }),
    lastRuns: run(R.lastRuns),
    skipDelays: run(R.skipDelays),
    applyTaskChanges: run(R.applyTaskChanges),
    reconnect: run(R.reconnect),
    maxRunExceeded: set(R.maxRunExceeded),
    queueRestart: set(R.queueRestart),
    flushRestarts: run(R.flushRestarts),
    restartOne: run(R.restartOne),
    keepMaxRun: run(R.keepMaxRun),
    stampNow: set(R.stampNow),
    notePreviousNode: assign(({ event }) => ({ previousNodeId: (event as { output?: { previousNodeId?: string } }).output?.previousNodeId })),
    passGroupDelay: assign(({ context }) => ({ now: context.now + context.groupShutdownDelayMs })),
  },
}).createMachine({
  id: 'alloc',
  context: ({ input }) => R.initialContext(input),
  initial: 'pending',
  entry: 'startUpdateQueue',
  on: {
    // Updates apply one at a time: while update hooks run, the newest waits in the update queue's
    // single slot; the queue hands each back (`released`) when its turn comes. Once stopping, an
    // update never waits (the states below take it), and one released then is taken the same way.
    update: [
      { guard: 'staleUpdate' },
      { guard: 'mustQueue', actions: 'queueUpdate' },
      // Nomad's client reconnects (not updates) an alloc the servers marked unknown meanwhile.
      { guard: 'reconnect', actions: 'reconnect' },
      // Nomad hands a stop's update to its task runners before it kills them: a task the stop
      // drops is killed first, with "update missing task".
      { guard: 'terminalUpdate', target: '.stopping', actions: ['applyUpdate', 'noteSkipDelays', 'applyTaskChanges'] },
      // noShutdownDelay on any update cancels the delays, one in progress too (Nomad's Update).
      { guard: 'skipsDelays', actions: ['applyUpdate', 'skipDelays', 'applyTaskChanges', 'startUpdateHooks'] },
      { actions: ['applyUpdate', 'applyTaskChanges', 'startUpdateHooks'] },
    ],
    'xstate.done.actor.update-hooks': { actions: 'updateHooksDone' },
    'xstate.error.actor.update-hooks': { actions: 'updateHooksDone' },
    destroy: { target: '.stopping.destroying', actions: 'stampNow' },
    'task.state': { actions: ['recordTaskState', 'updateGates'] },
    toTask: { actions: 'forwardToTask' },
  },
  states: {
    pending: {
      // Checked before anything is built: a terminal alloc never builds, waits or runs.
      always: [
        { guard: 'destroyRequested', target: '#alloc.stopping.destroying' },
        { guard: 'arrivedTerminal', target: 'stopping' },
        { guard: 'stopRequested', target: 'stopping' },
      ],
      invoke: {
        id: 'alloc-dir',
        src: 'buildAllocDir',
        input: ({ context }) => ({ allocId: context.allocId, restoring: context.restoring }),
        onDone: 'waiting-prev',
        onError: [
          // Nomad's Restore: a restored alloc whose dir is gone fails and is destroyed.
          { guard: 'dirInaccessible', target: 'stopping.destroying', actions: 'restoreFailed' },
          { target: 'stopping', actions: 'setupFailed' },
        ],
      },
    },
    'waiting-prev': {
      initial: 'waiting',
      // Nomad arms max_run_duration in its prerun hooks, before it waits for previous allocs.
      ...MAX_RUN,
      states: {
        waiting: {
          always: { guard: 'nothingWatched', target: 'migrating' },
          invoke: {
            id: 'await-previous',
            src: 'awaitPrevious',
            input: ({ context }: { context: AllocContext }): WatchRequest => ({ alloc: context.alloc, ...context.watchSources }),
            onDone: { target: 'migrating', actions: 'notePreviousNode' },
            onError: { target: '#alloc.stopping', actions: 'setupFailed' },
          },
          // The bound is its own substate: xstate schedules an `after` timer on entry whatever
          // its guard says, and an unbounded wait must hold no timer at all.
          initial: 'choosing',
          states: {
            choosing: {
              always: [{ guard: 'hasWaitTimeout', target: 'bounded' }, { target: 'unbounded' }],
            },
            unbounded: {},
            bounded: {
              after: { prevAllocWait: { target: '#alloc.stopping', actions: 'waitTimedOut' } },
            },
          },
        },
        migrating: {
          invoke: {
            id: 'migrate',
            src: 'migrateData',
            // The chart decides the migration (a pure policy); the effect carries it out.
            input: ({ context }): MigrateDataInput => ({ allocId: context.allocId, plan: R.planMigration(context) }),
            onDone: '#alloc.running',
            onError: { target: '#alloc.stopping', actions: 'setupFailed' },
          },
        },
      },
    },
    running: {
      initial: 'prerun',
      // Nomad arms max_run_duration in its prerun hooks and keeps it until the tasks are done.
      ...MAX_RUN,
      on: { ...MAX_RUN.on, restartTask: { actions: 'restartOne' } },
      states: {
        prerun: {
          invoke: {
            id: 'prerun-hooks',
            src: 'runHooks',
            input: hooksOf('prerun'),
            onDone: { target: 'tasks', actions: ['updateGates', 'spawnTasks'] },
            onError: { target: '#alloc.stopping', actions: 'setupFailed' },
          },
        },
        tasks: {
          always: GROUP_ENDS,
          on: {
            restartAll: { target: 'preRestart', actions: 'queueRestart' },
            restartRunning: { target: 'preRestart', actions: 'queueRestart' },
          },
        },
        /**
         * A group restart (Nomad's RestartAll/RestartRunning): the group's shutdown_delay, then the
         * preTaskRestart hooks, then the restarts. A single task's restart runs neither.
         */
        preRestart: {
          initial: 'delay',
          always: GROUP_ENDS,
          on: {
            restartAll: { actions: 'queueRestart' },
            restartRunning: { actions: 'queueRestart' },
          },
          states: {
            delay: {
              always: { guard: not('restartDelayDue'), target: 'hooks' },
              after: { groupShutdownDelay: { target: 'hooks', actions: 'passGroupDelay' } },
            },
            hooks: runHooksThen('pre-restart-hooks', 'preTaskRestart', { target: '#alloc.running.tasks', actions: ['flushRestarts', 'updateGates'] }),
          },
        },
      },
    },
    stopping: {
      initial: 'prekill',
      // A restored alloc that stops before its tasks were spawned still owns the processes its
      // saved handles name: spawn the tasks (gates closed) so the kill phases reach them.
      // max_run_duration keeps counting through a stop (its delays too), as Nomad's timer does.
      entry: ['spawnRestoredTasks', 'markUnstartedDead', 'keepMaxRun'],
      // Already stopping: a later update only replaces the alloc (no re-entry, no hooks), or
      // says to skip the shutdown delays, or reconnects.
      on: {
        update: [
          { guard: 'staleUpdate' },
          { guard: 'reconnect', actions: 'reconnect' },
          { guard: 'skipsDelays', actions: ['applyUpdate', 'skipDelays', 'applyTaskChanges'] },
          // Nomad hands every update to its task runners, stopping or not: a task a stop's
          // update drops is killed ("update missing task") and never restarts.
          { actions: ['applyUpdate', 'applyTaskChanges'] },
        ],
        'maxRunDuration.elapsed': { guard: 'maxRunDue', actions: 'maxRunExceeded' },
        // Being in `stopping` is what closes the gates of all but the poststop tasks.
        'task.state': { actions: ['recordTaskState', 'updateStoppingGates'] },
      },
      states: {
        /**
         * Before the first kill (Nomad's killTasks → PreKill hooks): the group's shutdown_delay
         * (Nomad's group-services hook waits it), then the host's preKill hooks, in that order.
         */
        ...killPipeline('stop'),
        poststop: {
          entry: 'updateStoppingGates',
          always: { guard: 'poststopDone', target: 'postrun' },
        },
        postrun: runHooksThen('postrun-hooks', 'postrun', { target: 'stopped', actions: 'markPostrunDone' }),
        stopped: { entry: 'disarmMaxRun' },
        /**
         * Nomad's destroy: the same kills as a stop (shutdown delays skipped: a destroy does not
         * wait), poststop tasks then run to their end, postrun hooks run if they have not, then
         * the destroy hooks remove everything.
         */
        destroying: {
          initial: 'prekill',
          entry: ['skipDelays', 'lastRuns', 'disarmMaxRun'],
          on: {
            destroy: {},
            update: [{ guard: 'staleUpdate' }, { guard: 'reconnect', actions: 'reconnect' }, { actions: ['applyUpdate', 'applyTaskChanges'] }],
          },
          states: {
            ...killPipeline('destroy'),
            /**
             * The poststop tasks run; a destroy waits for them at most the client's max kill
             * timeout, then kills what is left (Nomad waits without bound; berth's destroy always
             * ends, even over a driver whose start hangs).
             */
            poststop: {
              on: { 'task.state': { actions: ['recordTaskState', 'updateStoppingGates'] } },
              always: { guard: 'allDead', target: 'postrun' },
              after: { poststopBound: 'poststopKill' },
            },
            poststopKill: {
              entry: ['planPoststopKills', 'advanceKills'],
              on: { 'task.state': { actions: ['recordTaskState', 'advanceKills'] } },
              always: { guard: 'allDead', target: 'postrun' },
            },
            postrun: {
              always: { guard: not('needsPostrun'), target: 'hooks' },
              ...runHooksThen('postrun-hooks', 'postrun', { target: 'hooks', actions: 'markPostrunDone' }),
            },
            hooks: runHooksThen('destroy-hooks', 'destroy', '#alloc.destroyed'),
          },
        },
      },
    },
    // Final: the actor is done and takes no more events (a later destroy or update is the
    // runner's to answer), so no transitions here.
    destroyed: {
      type: 'final',
    },
  },
});

/**
 * The alloc chart's top-level states in lifecycle order, read from the chart (its states are
 * declared in that order), so `waitFor` can tell a state that was already passed.
 */
export const ALLOC_STATES: readonly AllocState[] = Object.keys(allocMachine.config.states ?? {}) as AllocState[];
