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
import { missingActor } from './missing-actor.ts';
import { and, assign, enqueueActions, not, setup, stopChild, type PromiseActorLogic } from 'xstate';
import { AllocDirInaccessibleError } from '../model/errors.ts';
import { isClientTerminalStatus, isServerTerminal } from '../model/status.ts';
import type { Allocation, ClientStatus, TaskEvent, TaskState } from '../model/types.ts';
import { groupKillEvent, killPhases, type GroupKillEvent } from './policy/kill-order.ts';
import { gateOpen, nextCoordinatorState, type CoordinatorState } from './policy/lifecycle-gates.ts';
import { pickQueuedUpdate } from './policy/update-queue.ts';
import { appendEvent, taskEvent } from './policy/task-events.ts';
import { MAX_RUN_DURATION_REASON, maxRunDeadline } from './policy/max-run-duration.ts';
import { skipsShutdownDelay } from './policy/shutdown-delay.ts';
import { missingTaskEvent, taskChanges } from './policy/task-changes.ts';
import { isReconnect } from './policy/reconnect.ts';
import { taskSettingsFor, type TaskSettings } from './policy/task-settings.ts';
import type { TaskRole } from './policy/task-roles.ts';
import type { TaskMachineEvent, TaskMachineInput } from './task.machine.ts';
import type { TaskHandle } from '../model/task-handle.ts';
import type { AllocState } from '../model/alloc-state.ts';
import type { WatchRequest } from '../model/watch.ts';

export type { TaskSettings } from './policy/task-settings.ts';

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
  /**
   * What the watcher plans with (plain flags): whether the previous alloc and each preempted one
   * has a local runner (`true`) or not (`null`), and whether the servers can be asked.
   */
  watchSources?: Omit<WatchRequest, 'alloc'>;
  /** Restoring a saved alloc: task name -> saved driver handle (plain JSON). */
  restoredHandles?: Record<string, TaskHandle>;
  /** Restoring an alloc whose destroy had begun: finish the destroy, run nothing. */
  destroyRequested?: boolean;
  /** The client's cap on kill timeouts (for task definitions an update changes). Default 30 s. */
  maxKillTimeoutMs?: number;
  /** Restored from the client's records (its alloc dir must still be there). */
  restoring?: boolean;
  /** Restored tasks an update had dropped: killed as soon as their actors exist. */
  removedTasks?: string[];
  /** The host registered hooks with an `update` method: non-terminal updates run them. */
  hasUpdateHooks?: boolean;
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
  watchSources?: Omit<WatchRequest, 'alloc'>;
  now: number;
  restoredHandles?: Record<string, TaskHandle>;
  /**
   * The alloc was already client-terminal (complete, failed, lost) when this client got it, from
   * the servers or from its own records: it builds nothing, runs no prerun/postrun hook and starts
   * no task (Nomad's shouldRun; #5883 re-ran finished batch allocs on restore). Its client status
   * stays the one it came with.
   */
  arrivedTerminal: boolean;
  /** The client status (and description) a terminal alloc arrived with: what it keeps reporting. */
  arrivedStatus?: Pick<Allocation, 'clientStatus' | 'clientDescription'>;
  destroyRequested: boolean;
  /** The group's shutdown_delay (ms), waited once before the first kill. */
  groupShutdownDelayMs: number;
  /** Shutdown delays are skipped: the servers said so (`noShutdownDelay`) or a destroy began. */
  delaysSkipped: boolean;
  /** The preKill hooks ran (they run once, before the first kill). */
  preKillDone: boolean;
  /** The postrun hooks ran. */
  postrunDone: boolean;
  /** max_run_duration elapsed: the alloc is stopped, complete, with Nomad's description. */
  maxRunExceeded: boolean;
  /** When max_run_duration ends (ms since the epoch), if it applies. */
  maxRunDeadline?: number;
  /** A client status the task states do not say (max_run_duration, a failed restore). */
  statusOverride?: { status: ClientStatus; description: string };
  /** Restarts asked for while the preTaskRestart hooks run (a task name, or '*' for all). */
  pendingRestarts: Array<{ taskName?: string; time: number; reason?: string; failure?: boolean }>;
  /** Restored from the state store (its alloc dir must already exist). */
  restoring: boolean;
  /** Tasks an update dropped: killed, and never started again (not even by restartAll). */
  removedTasks: string[];
  /** The alloc is stopping (or being destroyed): no task but a poststop one starts any more. */
  stopping: boolean;
  maxKillTimeoutMs: number;
  hasUpdateHooks: boolean;
  /** Update hooks are running for the last applied update; later updates wait in the slot. */
  updating: boolean;
  /** The single-slot update queue (Nomad's AllocRunner.Update): the update applied next. */
  queuedUpdate?: Allocation;
}

/** Events the alloc machine accepts. */
export type AllocMachineEvent =
  | { type: 'update'; alloc: Allocation; time: number }
  | { type: 'destroy'; time: number }
  | { type: 'task.state'; taskName: string; state: TaskState; eventSeq: number }
  /** Forwards an event to one task's actor (restart, signal events). */
  | { type: 'toTask'; taskName: string; event: TaskMachineEvent }
  /** Alloc-level restart: reset the coordinator and re-run every task, dead ones too. */
  | { type: 'restartAll'; time: number; reason?: string }
  /** Restart one running task, after the preTaskRestart hooks. */
  | { type: 'restartTask'; taskName: string; time: number; reason?: string; failure?: boolean }
  /** The max_run_duration timer fired (it was armed for `deadline`). */
  | { type: 'maxRunDuration.elapsed'; deadline: number; time: number };

/** Actor id of a task: `task-<allocId>-<taskName>`. */
export const taskActorId = (allocId: string, taskName: string) => `task-${allocId}-${taskName}`;

type Ctx = AllocContext;

const isDead = (c: Ctx, name: string) => c.taskStates[name]?.state === 'dead';

function markSetupFailed(c: Ctx, reason: string, time: number): Partial<Ctx> {
  const taskStates: Record<string, TaskState> = {};
  const eventSeq = { ...c.eventSeq };
  for (const [name, s] of Object.entries(c.taskStates)) {
    const ev = taskEvent('Setup Failure', time, {
      displayMessage: reason,
      details: { setup_error: reason, fails_task: 'true', kill_reason: 'Failed Restoring Task' },
    });
    const next = appendEvent(s, ev);
    // A restored task whose saved handle names a live run is not dead yet: its task actor
    // reattaches and kills it first (the stop that follows spawns it), then reports dead.
    const live = !c.spawned && s.state !== 'dead' && !!c.restoredHandles?.[name] && !c.restoredHandles[name]!.exited;
    taskStates[name] = live ? next : { ...next, state: 'dead', finishedAt: s.finishedAt ?? time };
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

/** Kills the restored tasks an update dropped before their actors existed ("update missing task"). */
function killRemoved(c: Ctx, enqueue: { sendTo: (to: string, ev: TaskMachineEvent) => void }): void {
  for (const name of c.removedTasks) {
    if (isDead(c, name) || !c.restoredHandles?.[name]) continue;
    enqueue.sendTo(taskActorId(c.allocId, name), { type: 'kill', time: c.now, reason: missingTaskEvent(c.now), noKillingEvent: true });
  }
}

/**
 * Kill phases of a stop or destroy: leader, other main tasks, sidecars; when max_run_duration
 * elapsed, poststop tasks first, so they never start (Nomad's killTasks).
 */
function stopPhases(c: Ctx): string[][] {
  const phases = killPhases(c.roles);
  if (!c.maxRunExceeded) return phases;
  const poststop = c.roles.filter((r) => r.poststop).map((r) => r.name);
  return poststop.length ? [poststop, ...phases] : phases;
}

/** The host hook kinds the alloc chart runs (the `runHooks` effect's input). */
type AllocHookKind = 'prerun' | 'update' | 'preKill' | 'postrun' | 'destroy' | 'preTaskRestart';

/** The `runHooks` input for one kind of hook. */
const hooksOf =
  <K extends AllocHookKind>(kind: K) =>
  ({ context }: { context: AllocContext }) => ({ allocId: context.allocId, kind });

/** Before the first kill of a stop or a destroy: the preKill hooks; their failure only moves on. */
const PREKILL_HOOKS = {
  invoke: {
    id: 'prekill-hooks',
    src: 'runHooks',
    input: hooksOf('preKill'),
    onDone: { target: 'killing', actions: 'markPreKillDone' },
    onError: { target: 'killing', actions: 'markPreKillDone' },
  },
} as const;

/** While running: the group stops when its main tasks are dead, or a task's end kills it. */
const GROUP_ENDS = [
  { guard: 'allMainDead', target: '#alloc.stopping' },
  { guard: 'mustKillGroup', target: '#alloc.stopping', actions: 'chooseKillEvent' },
] as const;

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
    migrateData: missingActor<PromiseActorLogic<void, { allocId: string; previousNodeId?: string }>>('alloc', 'migrateData'),
    runHooks: missingActor<PromiseActorLogic<void, { allocId: string; kind: AllocHookKind }>>('alloc', 'runHooks'),
    maxRunTimer: missingActor('alloc', 'maxRunTimer'),
    task: missingActor('alloc', 'task'),
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
    updating: ({ context }) => context.updating,
    terminalUpdate: ({ event }) => event.type === 'update' && isServerTerminal(event.alloc),
    /** Older than the alloc applied (Nomad's client drops those): listeners never go back. */
    staleUpdate: ({ context, event }) => event.type === 'update' && event.alloc.allocModifyIndex < context.alloc.allocModifyIndex,
    allMainDead: ({ context }) => context.roles.filter((r) => !r.poststop).every((r) => isDead(context, r.name)),
    mustKillGroup: ({ context }) => !!groupKillEvent(context.roles, context.taskStates),
    killDone: ({ context }) => context.killQueue.length === 0 && context.killCurrent.every((n) => isDead(context, n)),
    /** Wait the group's shutdown_delay: there is one, it is not skipped, and a task still runs. */
    groupDelayDue: ({ context }) =>
      context.spawned && context.groupShutdownDelayMs > 0 && !context.delaysSkipped && context.roles.some((r) => !r.poststop && !isDead(context, r.name)),
    delaysSkipped: ({ context }) => context.delaysSkipped,
    needsPreKill: ({ context }) => context.spawned && !context.preKillDone,
    needsPostrun: ({ context }) => context.spawned && !context.postrunDone && !context.arrivedTerminal,
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
    recordTaskState: assign(({ context, event }) => {
      if (event.type !== 'task.state') return {};
      return {
        taskStates: { ...context.taskStates, [event.taskName]: event.state },
        eventSeq: { ...context.eventSeq, [event.taskName]: event.eventSeq },
        version: context.version + 1,
      };
    }),
    applyUpdate: assign(({ context, event }) =>
      event.type === 'update' && event.alloc.allocModifyIndex >= context.alloc.allocModifyIndex
        ? { alloc: event.alloc, version: context.version + 1, now: Math.max(context.now, event.time) }
        : {},
    ),
    /** An update arrived while update hooks run: it takes the slot (see `pickQueuedUpdate`). */
    queueUpdate: assign(({ context, event }) => (event.type === 'update' ? { queuedUpdate: pickQueuedUpdate(context.queuedUpdate, event.alloc) } : {})),
    /** A stop is an update with a terminal desired status: no update hooks run for it. */
    startUpdateHooks: enqueueActions(({ context, enqueue }) => {
      if (!context.hasUpdateHooks) return;
      enqueue.spawnChild('runHooks', { id: 'update-hooks', input: hooksOf('update')({ context }) });
      enqueue.assign({ updating: true });
    }),
    /** The update hooks finished: apply the update waiting in the slot, if any. */
    nextUpdate: enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ updating: false, queuedUpdate: undefined });
      if (context.queuedUpdate) enqueue.raise({ type: 'update', alloc: context.queuedUpdate, time: context.now });
    }),
    spawnTasks: enqueueActions(({ context, enqueue }) => {
      for (const r of context.roles) {
        const settings = context.tasks[r.name]!;
        const restoredHandle = context.restoredHandles?.[r.name];
        const input: TaskMachineInput = {
          ...settings,
          initialState: context.taskStates[r.name]!,
          eventSeq: context.eventSeq[r.name] ?? context.taskStates[r.name]!.events.length,
          gateOpen: gateOpen(context.coordinator, r.stage),
          now: context.now,
          ...(restoredHandle ? { restoredHandle } : {}),
        };
        enqueue.spawnChild('task', { id: taskActorId(context.allocId, r.name), input });
      }
      killRemoved(context, enqueue);
      enqueue.assign({ spawned: true });
    }),
    /** Spawns every task with its gate closed, when restored handles must be reattached to be killed. */
    spawnRestoredTasks: enqueueActions(({ context, enqueue }) => {
      if (context.spawned || !context.restoredHandles || Object.keys(context.restoredHandles).length === 0) return;
      for (const r of context.roles) {
        const restoredHandle = context.restoredHandles[r.name];
        const input: TaskMachineInput = {
          ...context.tasks[r.name]!,
          initialState: context.taskStates[r.name]!,
          eventSeq: context.eventSeq[r.name] ?? context.taskStates[r.name]!.events.length,
          gateOpen: false,
          now: context.now,
          ...(restoredHandle ? { restoredHandle } : {}),
        };
        enqueue.spawnChild('task', { id: taskActorId(context.allocId, r.name), input });
      }
      killRemoved(context, enqueue);
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
          // Once stopping, only poststop tasks may still start (Nomad kills the others' runners
          // before their gates matter); a gate opening for any other task is not sent.
          if (was !== now && (!now || !context.stopping || r.stage === 'poststop')) {
            enqueue.sendTo(taskActorId(context.allocId, r.name), { type: 'gate', open: now } satisfies TaskMachineEvent);
          }
        }
      }
      enqueue.assign({ coordinator: next });
    }),
    chooseKillEvent: assign(({ context }) => ({ killEvent: groupKillEvent(context.roles, context.taskStates) })),
    planPoststopKills: assign(({ context }) => ({
      killQueue: [context.roles.filter((r) => r.poststop && !isDead(context, r.name)).map((r) => r.name)],
      killCurrent: [],
    })),
    planStopKills: assign(({ context }) => ({ killQueue: context.spawned ? stopPhases(context) : [], killCurrent: [] })),
    // A destroy kills what a stop kills; a poststop task that has not run yet then runs once, as
    // Nomad's destroy lets it; one that already ran (the stop came first) is killed, so a poststop
    // task that keeps restarting (or hangs in a restart) cannot hold the destroy forever.
    planDestroyKills: assign(({ context }) => {
      if (!context.spawned) return { killQueue: [], killCurrent: [] };
      const ran = context.roles.filter((r) => r.poststop && context.taskStates[r.name]?.startedAt !== undefined && !isDead(context, r.name)).map((r) => r.name);
      const phases = stopPhases(context);
      return { killQueue: ran.length && !context.maxRunExceeded ? [...phases, ran] : phases, killCurrent: [] };
    }),
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
        const kill: TaskMachineEvent = {
          type: 'kill',
          time: context.now,
          ...(reason ? { reason } : {}),
          ...(context.delaysSkipped ? { skipShutdownDelay: true } : {}),
          ...(context.maxRunExceeded ? { killingDisplay: MAX_RUN_DURATION_REASON } : {}),
        };
        for (const n of current) enqueue.sendTo(taskActorId(context.allocId, n), kill);
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
    markPreKillDone: assign({ preKillDone: true }),
    /**
     * Starts the max_run_duration timer (only for an alloc that has one: an idle child per alloc
     * costs memory at 10,000 allocs), and stops it when leaving the states it guards.
     */
    armMaxRun: enqueueActions(({ context, enqueue }) => {
      // Every state that arms it stops it on exit, so there is never one to replace here.
      if (context.maxRunDeadline === undefined) return;
      enqueue.spawnChild('maxRunTimer', { id: 'max-run', input: { deadline: context.maxRunDeadline } });
    }),
    disarmMaxRun: stopChild('max-run'),
    /** A restore that cannot go on (Nomad: SetClientStatus(failed), then Destroy). */
    restoreFailed: assign(({ context, event }) => {
      const err = (event as { error?: unknown }).error;
      const description = err instanceof Error ? err.message : String(err);
      return { statusOverride: { status: 'failed' as ClientStatus, description }, version: context.version + 1 };
    }),
    noteSkipDelays: assign(({ context, event }) => ({ delaysSkipped: context.delaysSkipped || (event.type === 'update' && skipsShutdownDelay(event.alloc)) })),
    markPostrunDone: assign({ postrunDone: true }),
    /** A destroy: every task's current run is its last (poststop tasks run once, then it ends). */
    lastRuns: enqueueActions(({ context, enqueue }) => {
      if (context.spawned) for (const r of context.roles) enqueue.sendTo(taskActorId(context.allocId, r.name), { type: 'finalRun' } satisfies TaskMachineEvent);
    }),
    /** Skips every shutdown delay from now on: the group's wait and each task's. */
    skipDelays: enqueueActions(({ context, enqueue }) => {
      if (context.delaysSkipped) return;
      enqueue.assign({ delaysSkipped: true });
      if (context.spawned)
        for (const r of context.roles) enqueue.sendTo(taskActorId(context.allocId, r.name), { type: 'skipShutdownDelay' } satisfies TaskMachineEvent);
    }),
    /**
     * A non-terminal update to a running alloc (Nomad's TaskRunner.Update): a task the update
     * dropped is killed with "update missing task"; kept tasks take their new kill settings; an
     * added task is not run; a changed max_run_duration re-arms its timer.
     */
    applyTaskChanges: enqueueActions(({ context, event, enqueue, self }) => {
      if (event.type !== 'update') return;
      const group = event.alloc.job.taskGroups.find((g) => g.name === event.alloc.taskGroup);
      const removedNow = group
        ? taskChanges(
            context.roles.map((r) => r.name),
            group,
          ).removed.filter((n) => !context.removedTasks.includes(n))
        : [];
      if (removedNow.length) enqueue.assign({ removedTasks: [...context.removedTasks, ...removedNow] });
      if (group && context.spawned) {
        const removed = removedNow;
        for (const name of removed) {
          if (isDead(context, name)) continue;
          enqueue.sendTo(taskActorId(context.allocId, name), {
            type: 'kill',
            time: event.time,
            reason: missingTaskEvent(event.time),
            noKillingEvent: true,
          } satisfies TaskMachineEvent);
        }
      }
      if (group && !context.spawned) {
        // Not started yet: it never will be (Nomad kills its runner before it runs).
        const removed = removedNow;
        const taskStates = { ...context.taskStates };
        const eventSeq = { ...context.eventSeq };
        for (const name of removed) {
          // A restored task's process may be alive: it is killed once its actor exists.
          if (context.restoredHandles?.[name]) continue;
          const st = appendEvent(taskStates[name]!, missingTaskEvent(event.time));
          taskStates[name] = { ...st, state: 'dead', finishedAt: st.finishedAt ?? event.time };
          eventSeq[name] = (eventSeq[name] ?? 0) + 1;
        }
        if (removed.some((n) => !context.restoredHandles?.[n])) enqueue.assign({ taskStates, eventSeq, version: context.version + 1 });
      }
      if (group) {
        const next = taskSettingsFor(event.alloc, context.maxKillTimeoutMs).tasks;
        const tasks = { ...context.tasks };
        for (const r of context.roles) {
          const now = next[r.name];
          const was = context.tasks[r.name];
          if (!now || !was) continue;
          if (now.killTimeoutMs !== was.killTimeoutMs || now.killSignal !== was.killSignal || now.shutdownDelayMs !== was.shutdownDelayMs) {
            tasks[r.name] = { ...was, killTimeoutMs: now.killTimeoutMs, killSignal: now.killSignal, shutdownDelayMs: now.shutdownDelayMs };
            enqueue.sendTo(taskActorId(context.allocId, r.name), {
              type: 'settings',
              killTimeoutMs: now.killTimeoutMs,
              killSignal: now.killSignal,
              shutdownDelayMs: now.shutdownDelayMs ?? 0,
            } satisfies TaskMachineEvent);
          }
        }
        enqueue.assign({ tasks });
      }
      const deadline = maxRunDeadline(event.alloc);
      if (deadline !== context.maxRunDeadline) {
        enqueue.assign({ maxRunDeadline: deadline });
        // Armed only while running (it is armed from the context when running begins).
        const timer = self.getSnapshot().children['max-run'];
        if (timer) enqueue.sendTo('max-run', { type: 'arm', deadline });
        else if (deadline !== undefined && (self.getSnapshot().matches('running') || self.getSnapshot().matches('waiting-prev'))) {
          enqueue.spawnChild('maxRunTimer', { id: 'max-run', input: { deadline } });
        }
      }
      enqueue.assign({ groupShutdownDelayMs: group?.shutdownDelayMs ?? context.groupShutdownDelayMs });
    }),
    /**
     * Nomad's Reconnect: each task gets a "Reconnected" event, the alloc takes the servers' new
     * index (nothing else), and the client view is recomputed from the task states (the tasks
     * kept running while the servers called the alloc unknown).
     */
    reconnect: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'update') return;
      const ev = taskEvent('Reconnected', event.time);
      if (context.spawned) {
        for (const r of context.roles) enqueue.sendTo(taskActorId(context.allocId, r.name), { type: 'append', event: ev } satisfies TaskMachineEvent);
      } else {
        const taskStates: Record<string, TaskState> = {};
        const eventSeq = { ...context.eventSeq };
        for (const [name, st] of Object.entries(context.taskStates)) {
          taskStates[name] = appendEvent(st, ev);
          eventSeq[name] = (eventSeq[name] ?? 0) + 1;
        }
        enqueue.assign({ taskStates, eventSeq });
      }
      enqueue.assign({
        alloc: { ...context.alloc, allocModifyIndex: event.alloc.allocModifyIndex },
        version: context.version + 1,
        now: Math.max(context.now, event.time),
      });
    }),
    /** max_run_duration elapsed: complete, with Nomad's description; the stop kills poststop first. */
    maxRunExceeded: assign(({ context, event }) => ({
      maxRunExceeded: true,
      statusOverride: { status: 'complete' as ClientStatus, description: MAX_RUN_DURATION_REASON },
      version: context.version + 1,
      now: event.type === 'maxRunDuration.elapsed' ? Math.max(context.now, event.time) : context.now,
    })),
    queueRestart: assign(({ context, event }) => {
      if (event.type === 'restartTask')
        return { pendingRestarts: [...context.pendingRestarts, { taskName: event.taskName, time: event.time, reason: event.reason, failure: event.failure }] };
      if (event.type === 'restartAll') return { pendingRestarts: [...context.pendingRestarts, { time: event.time, reason: event.reason }] };
      return {};
    }),
    /** The preTaskRestart hooks ran: do the restarts asked for meanwhile, in order. */
    flushRestarts: enqueueActions(({ context, enqueue }) => {
      for (const p of context.pendingRestarts) {
        if (p.taskName !== undefined) {
          enqueue.sendTo(taskActorId(context.allocId, p.taskName), {
            type: 'restart',
            time: p.time,
            reason: p.reason,
            failure: p.failure,
          } satisfies TaskMachineEvent);
          continue;
        }
        enqueue.assign({ coordinator: 'init' as CoordinatorState });
        for (const r of context.roles) {
          if (context.removedTasks.includes(r.name)) continue;
          enqueue.sendTo(taskActorId(context.allocId, r.name), { type: 'gate', open: false } satisfies TaskMachineEvent);
          enqueue.sendTo(taskActorId(context.allocId, r.name), { type: 'restartAll', time: p.time, reason: p.reason } satisfies TaskMachineEvent);
        }
      }
      enqueue.assign({ pendingRestarts: [] });
    }),
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
      ...(input.watchSources ? { watchSources: input.watchSources } : {}),
      now: input.now,
      arrivedTerminal: isClientTerminalStatus(input.alloc.clientStatus),
      ...(isClientTerminalStatus(input.alloc.clientStatus)
        ? {
            arrivedStatus: {
              clientStatus: input.alloc.clientStatus,
              ...(input.alloc.clientDescription ? { clientDescription: input.alloc.clientDescription } : {}),
            },
          }
        : {}),
      destroyRequested: !!input.destroyRequested,
      groupShutdownDelayMs: input.alloc.job.taskGroups.find((g) => g.name === input.alloc.taskGroup)?.shutdownDelayMs ?? 0,
      delaysSkipped: skipsShutdownDelay(input.alloc),
      preKillDone: false,
      postrunDone: false,
      maxRunExceeded: false,
      maxRunDeadline: maxRunDeadline(input.alloc),
      pendingRestarts: [],
      removedTasks: input.removedTasks ?? [],
      stopping: false,
      restoring: !!input.restoring,
      maxKillTimeoutMs: input.maxKillTimeoutMs ?? 30_000,
      hasUpdateHooks: !!input.hasUpdateHooks,
      updating: false,
      ...(input.restoredHandles ? { restoredHandles: input.restoredHandles } : {}),
    };
  },
  initial: 'pending',
  on: {
    // Updates apply one at a time: while update hooks run, the newest waits in a single slot.
    update: [
      { guard: 'staleUpdate' },
      { guard: 'updating', actions: 'queueUpdate' },
      // Nomad's client reconnects (not updates) an alloc the servers marked unknown meanwhile.
      { guard: 'reconnect', actions: 'reconnect' },
      { guard: 'terminalUpdate', target: '.stopping', actions: ['applyUpdate', 'noteSkipDelays'] },
      { actions: ['applyUpdate', 'applyTaskChanges', 'startUpdateHooks'] },
    ],
    'xstate.done.actor.update-hooks': { actions: 'nextUpdate' },
    'xstate.error.actor.update-hooks': { actions: 'nextUpdate' },
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
      entry: 'armMaxRun',
      exit: 'disarmMaxRun',
      on: {
        'maxRunDuration.elapsed': { guard: 'maxRunDue', target: '#alloc.stopping', actions: 'maxRunExceeded' },
      },
      states: {
        waiting: {
          always: { guard: 'nothingWatched', target: 'migrating' },
          invoke: {
            id: 'await-previous',
            src: 'awaitPrevious',
            input: ({ context }: { context: AllocContext }): WatchRequest => ({ alloc: context.alloc, ...context.watchSources }),
            onDone: {
              target: 'migrating',
              actions: assign(({ event }) => ({ previousNodeId: (event.output as { previousNodeId?: string } | undefined)?.previousNodeId })),
            },
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
              after: {
                prevAllocWait: {
                  target: '#alloc.stopping',
                  actions: assign(({ context }) =>
                    markSetupFailed(
                      context,
                      `failed to setup alloc: timed out after ${context.prevAllocWaitTimeoutMs}ms waiting for previous allocations to stop`,
                      context.now + (context.prevAllocWaitTimeoutMs ?? 0),
                    ),
                  ),
                },
              },
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
      // Nomad arms max_run_duration in its prerun hooks and keeps it until the tasks are done.
      entry: 'armMaxRun',
      exit: 'disarmMaxRun',
      on: {
        'maxRunDuration.elapsed': { guard: 'maxRunDue', target: '#alloc.stopping', actions: 'maxRunExceeded' },
      },
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
            restartTask: { target: 'preRestart', actions: 'queueRestart' },
          },
        },
        /** The preTaskRestart hooks run before anything restarts (Nomad's RestartTask/RestartAll). */
        preRestart: {
          always: GROUP_ENDS,
          invoke: {
            id: 'pre-restart-hooks',
            src: 'runHooks',
            input: hooksOf('preTaskRestart'),
            onDone: { target: 'tasks', actions: ['flushRestarts', 'updateGates'] },
            onError: { target: 'tasks', actions: ['flushRestarts', 'updateGates'] },
          },
          on: {
            restartAll: { actions: 'queueRestart' },
            restartTask: { actions: 'queueRestart' },
          },
        },
      },
    },
    stopping: {
      initial: 'prekill',
      // A restored alloc that stops before its tasks were spawned still owns the processes its
      // saved handles name: spawn the tasks (gates closed) so the kill phases reach them.
      entry: [assign({ stopping: true }), 'spawnRestoredTasks', 'markUnstartedDead'],
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
      },
      states: {
        /**
         * Before the first kill (Nomad's killTasks → PreKill hooks): the group's shutdown_delay
         * (Nomad's group-services hook waits it), then the host's preKill hooks, in that order.
         */
        prekill: {
          always: [{ guard: 'groupDelayDue', target: 'groupDelay' }, { guard: 'needsPreKill', target: 'preKillHooks' }, { target: 'killing' }],
        },
        groupDelay: {
          always: { guard: 'delaysSkipped', target: 'preKillHooks' },
          after: { groupShutdownDelay: { target: 'preKillHooks', actions: assign(({ context }) => ({ now: context.now + context.groupShutdownDelayMs })) } },
        },
        preKillHooks: PREKILL_HOOKS,
        killing: {
          entry: ['planStopKills', 'advanceKills'],
          on: { 'task.state': { actions: ['recordTaskState', 'updateGates', 'advanceKills'] } },
          always: { guard: 'killDone', target: 'poststop' },
        },
        poststop: {
          entry: 'updateGates',
          always: [
            { guard: and(['poststopDone', 'arrivedTerminal']), target: 'stopped' },
            { guard: 'poststopDone', target: 'postrun' },
          ],
        },
        postrun: {
          invoke: {
            id: 'postrun-hooks',
            src: 'runHooks',
            input: hooksOf('postrun'),
            onDone: { target: 'stopped', actions: 'markPostrunDone' },
            onError: { target: 'stopped', actions: 'markPostrunDone' },
          },
        },
        stopped: {},
        /**
         * Nomad's destroy: the same kills as a stop (shutdown delays skipped: a destroy does not
         * wait), poststop tasks then run to their end, postrun hooks run if they have not, then
         * the destroy hooks remove everything.
         */
        destroying: {
          initial: 'prekill',
          entry: ['skipDelays', 'lastRuns'],
          on: {
            destroy: {},
            update: [{ guard: 'staleUpdate' }, { guard: 'reconnect', actions: 'reconnect' }, { actions: ['applyUpdate', 'applyTaskChanges'] }],
          },
          states: {
            prekill: {
              always: [{ guard: 'needsPreKill', target: 'preKillHooks' }, { target: 'killing' }],
            },
            preKillHooks: PREKILL_HOOKS,
            killing: {
              entry: ['markUnstartedDead', 'planDestroyKills', 'advanceKills', 'updateGates'],
              on: { 'task.state': { actions: ['recordTaskState', 'updateGates', 'advanceKills'] } },
              always: [
                { guard: 'allDead', target: 'postrun' },
                { guard: 'killDone', target: 'poststop' },
              ],
            },
            /**
             * The poststop tasks run; a destroy waits for them at most the client's max kill
             * timeout, then kills what is left (Nomad waits without bound; berth's destroy always
             * ends, even over a driver whose start hangs).
             */
            poststop: {
              on: { 'task.state': { actions: ['recordTaskState', 'updateGates'] } },
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
              invoke: {
                id: 'postrun-hooks',
                src: 'runHooks',
                input: hooksOf('postrun'),
                onDone: { target: 'hooks', actions: 'markPostrunDone' },
                onError: { target: 'hooks', actions: 'markPostrunDone' },
              },
            },
            hooks: {
              invoke: {
                id: 'destroy-hooks',
                src: 'runHooks',
                input: hooksOf('destroy'),
                onDone: '#alloc.destroyed',
                onError: '#alloc.destroyed',
              },
            },
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
