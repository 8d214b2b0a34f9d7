/**
 * The alloc chart's actions as named pure functions: each takes the context (and the event) and
 * returns a {@link Step}, plain data saying what changes and what is sent to whom. The chart
 * (`chart.ts`) applies a step with one adapter; these specs test them alone, as `policy/` is.
 * @module
 */
import { isClientTerminalStatus } from '../../model/status.ts';
import type { ClientStatus, TaskEvent, TaskState } from '../../model/types.ts';
import { errorText } from '../../model/error-text.ts';
import { groupKillEvent, killPhases } from '../policy/kill-order.ts';
import { gateOpen, nextCoordinatorState, type CoordinatorState } from '../policy/lifecycle-gates.ts';
import { appendEvent, taskEvent } from '../policy/task-events.ts';
import { MAX_RUN_DURATION_REASON, maxRunDeadline } from '../policy/max-run-duration.ts';
import { skipsShutdownDelay } from '../policy/shutdown-delay.ts';
import { missingTaskEvent, taskChanges } from '../policy/task-changes.ts';
import { taskSettingsFor } from '../policy/task-settings.ts';
import { migrationPlan, type MigrationPlan } from '../policy/migration-plan.ts';
import type { TaskMachineEvent, TaskMachineInput } from '../task/index.ts';
import { taskMachineInput } from '../task/input.ts';
import type { AllocContext, AllocHookKind, AllocMachineEvent, AllocMachineInput } from './context.ts';
import type { UpdateQueueEvent } from './update-queue.ts';

type Ctx = AllocContext;
type Ev = AllocMachineEvent;

/**
 * What one action does, as data. The chart applies it in this order: spawn task actors, send
 * to tasks, spawn or arm the max_run_duration timer, start hooks, tell the update queue, assign `patch`.
 */
export interface Step {
  /** Context fields to assign. */
  patch?: Partial<Ctx>;
  /** Task actors to spawn (by task name, with their input). */
  spawn?: TaskMachineInput[];
  /** Events for task actors, by task name, in order. */
  send?: Array<[task: string, event: TaskMachineEvent]>;
  /** The max_run_duration timer: spawn one for `deadline`, or move the running one. */
  timer?: { spawn: number } | { arm: number | undefined };
  /** Hooks to start as a child (the update hooks). */
  hooks?: AllocHookKind;
  /** An event for the update queue child (`update-queue.ts`). */
  updates?: UpdateQueueEvent;
}

const NONE: Step = {};

/** True when the task is dead. */
export const isDead = (c: Ctx, name: string): boolean => c.taskStates[name]?.state === 'dead';

/** The chart's initial context for its input. */
export function initialContext(input: AllocMachineInput): Ctx {
  const taskStates: Record<string, TaskState> = {};
  const eventSeq: Record<string, number> = {};
  for (const r of input.roles) {
    taskStates[r.name] = input.alloc.taskStates?.[r.name] ?? { state: 'pending', failed: false, restarts: 0, events: [taskEvent('Received', input.now)] };
    eventSeq[r.name] = taskStates[r.name]!.events.length;
  }
  const arrived = isClientTerminalStatus(input.alloc.clientStatus);
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
    arrivedTerminal: arrived,
    ...(arrived
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
    maxRunTimer: 'never',
    pendingRestarts: [],
    removedTasks: input.removedTasks ?? [],
    restoring: !!input.restoring,
    maxKillTimeoutMs: input.maxKillTimeoutMs ?? 30_000,
    hasUpdateHooks: !!input.hasUpdateHooks,
    ...(input.restoredHandles ? { restoredHandles: input.restoredHandles } : {}),
  };
}

/** Every task fails setup with `reason` (a task whose restored process may live stays as it is). */
export function markSetupFailed(c: Ctx, reason: string, time: number): Partial<Ctx> {
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

/** A setup effect failed (build, wait, migration, prerun hooks): every task fails. */
export const setupFailed = (c: Ctx, e: unknown): Partial<Ctx> =>
  markSetupFailed(c, `failed to setup alloc: ${errorText((e as { error?: unknown }).error)}`, c.now);

/** The bounded wait for previous allocs ran out. */
export const waitTimedOut = (c: Ctx): Partial<Ctx> =>
  markSetupFailed(
    c,
    `failed to setup alloc: timed out after ${c.prevAllocWaitTimeoutMs}ms waiting for previous allocations to stop`,
    c.now + (c.prevAllocWaitTimeoutMs ?? 0),
  );

/** Tasks that never started (stop before `running`) become dead, not failed. */
export function markUnstartedDead(c: Ctx): Partial<Ctx> {
  if (c.spawned) return {};
  const taskStates: Record<string, TaskState> = {};
  for (const [name, s] of Object.entries(c.taskStates)) taskStates[name] = s.state === 'dead' ? s : { ...s, state: 'dead', finishedAt: s.finishedAt ?? c.now };
  return { taskStates, version: c.version + 1 };
}

/** Kills the restored tasks an update dropped before their actors existed ("update missing task"). */
function killRemoved(c: Ctx): Array<[string, TaskMachineEvent]> {
  return c.removedTasks
    .filter((name) => !isDead(c, name) && !!c.restoredHandles?.[name])
    .map((name) => [name, { type: 'kill', time: c.now, reason: missingTaskEvent(c.now), noKillingEvent: true }]);
}

/**
 * Kill phases of a stop or destroy: leader, other main tasks, sidecars; when max_run_duration
 * elapsed, poststop tasks first, so they never start (Nomad's killTasks).
 */
export function stopPhases(c: Ctx): string[][] {
  const phases = killPhases(c.roles);
  if (!c.maxRunExceeded) return phases;
  const poststop = c.roles.filter((r) => r.poststop).map((r) => r.name);
  return poststop.length ? [poststop, ...phases] : phases;
}

/** A task reported its state. */
export const recordTaskState = (c: Ctx, e: Ev): Partial<Ctx> =>
  e.type !== 'task.state'
    ? {}
    : { taskStates: { ...c.taskStates, [e.taskName]: e.state }, eventSeq: { ...c.eventSeq, [e.taskName]: e.eventSeq }, version: c.version + 1 };

/** Takes a newer server alloc (never an older one). */
export const applyUpdate = (c: Ctx, e: Ev): Partial<Ctx> =>
  e.type === 'update' && e.alloc.allocModifyIndex >= c.alloc.allocModifyIndex ? { alloc: e.alloc, version: c.version + 1, now: Math.max(c.now, e.time) } : {};

/** Hands an update to the update queue child: it hands it back at once, or holds it while update hooks run. */
export const queueUpdate = (_c: Ctx, e: Ev): Step =>
  e.type === 'update' && !e.released ? { updates: { type: 'update', alloc: e.alloc, time: e.time } } : NONE;

/** A non-terminal update: the host's update hooks run, and the update queue holds later updates meanwhile. */
export const startUpdateHooks = (c: Ctx): Step => (c.hasUpdateHooks ? { hooks: 'update', updates: { type: 'hooks.started' } } : NONE);

/** The update hooks ended (done or failed): the update queue releases the update it holds, if any. */
export const updateHooksDone = (c: Ctx): Step => ({ updates: { type: 'hooks.done', time: c.now } });

function taskInput(c: Ctx, name: string, gate: boolean): TaskMachineInput {
  return taskMachineInput(c.tasks[name]!, {
    initialState: c.taskStates[name]!,
    eventSeq: c.eventSeq[name],
    gateOpen: gate,
    now: c.now,
    restoredHandle: c.restoredHandles?.[name],
  });
}

/** Spawns every task, each gate as the coordinator says. */
export const spawnTasks = (c: Ctx): Step => ({
  spawn: c.roles.map((r) => taskInput(c, r.name, gateOpen(c.coordinator, r.stage))),
  send: killRemoved(c),
  patch: { spawned: true },
});

/** Spawns every task with its gate closed, when restored handles must be reattached to be killed. */
export const spawnRestoredTasks = (c: Ctx): Step =>
  c.spawned || !c.restoredHandles || Object.keys(c.restoredHandles).length === 0
    ? NONE
    : { spawn: c.roles.map((r) => taskInput(c, r.name, false)), send: killRemoved(c), patch: { spawned: true } };

/**
 * Recomputes the lifecycle coordinator and tells tasks whose gate changed. `stopping` is the
 * chart's state, not a flag: once stopping, only poststop tasks may still start (Nomad kills the
 * others' runners before their gates matter), so a gate opening for any other task is not sent.
 */
function gateStep(c: Ctx, stopping: boolean): Step {
  const next = nextCoordinatorState(c.coordinator, c.roles, c.taskStates);
  if (next === c.coordinator) return NONE;
  const send: Array<[string, TaskMachineEvent]> = [];
  if (c.spawned) {
    for (const r of c.roles) {
      const was = gateOpen(c.coordinator, r.stage);
      const now = gateOpen(next, r.stage);
      if (was !== now && (!now || !stopping || r.stage === 'poststop')) send.push([r.name, { type: 'gate', open: now }]);
    }
  }
  return { send, patch: { coordinator: next } };
}

/** Recomputes the gates before the alloc stops (any gate may open). */
export const updateGates = (c: Ctx): Step => gateStep(c, false);

/** Recomputes the gates in `stopping`: only a poststop task's gate may still open. */
export const updateStoppingGates = (c: Ctx): Step => gateStep(c, true);

/** Why the group is killed (a failed sibling, a dead leader, only sidecars left). */
export const chooseKillEvent = (c: Ctx): Partial<Ctx> => ({ killEvent: groupKillEvent(c.roles, c.taskStates) });

/** The kill plan of a stop. */
export const planStopKills = (c: Ctx): Partial<Ctx> => ({ killQueue: c.spawned ? stopPhases(c) : [], killCurrent: [] });

/** The poststop tasks still live, in one last phase (a destroy's bound on them ran out). */
export const planPoststopKills = (c: Ctx): Partial<Ctx> => ({
  killQueue: [c.roles.filter((r) => r.poststop && !isDead(c, r.name)).map((r) => r.name)],
  killCurrent: [],
});

/**
 * The kill plan of a destroy: what a stop kills; a poststop task that has not run yet then runs
 * once, as Nomad's destroy lets it; one that already ran (the stop came first) is killed, so a
 * poststop task that keeps restarting (or hangs in a restart) cannot hold the destroy forever.
 */
export function planDestroyKills(c: Ctx): Partial<Ctx> {
  if (!c.spawned) return { killQueue: [], killCurrent: [] };
  const ran = c.roles.filter((r) => r.poststop && c.taskStates[r.name]?.startedAt !== undefined && !isDead(c, r.name)).map((r) => r.name);
  const phases = stopPhases(c);
  return { killQueue: ran.length && !c.maxRunExceeded ? [...phases, ran] : phases, killCurrent: [] };
}

/** Starts the next kill phase once every task of the current one is dead. */
export function advanceKills(c: Ctx): Step {
  let queue = c.killQueue;
  let current = c.killCurrent;
  const send: Array<[string, TaskMachineEvent]> = [];
  while (current.every((n) => isDead(c, n)) && queue.length) {
    current = queue[0]!.filter((n) => !isDead(c, n));
    queue = queue.slice(1);
    const ke = c.killEvent;
    const reason: TaskEvent | undefined = ke ? taskEvent(ke.type, c.now, { details: ke.failedSibling ? { failed_sibling: ke.failedSibling } : {} }) : undefined;
    const kill: TaskMachineEvent = {
      type: 'kill',
      time: c.now,
      ...(reason ? { reason } : {}),
      ...(c.delaysSkipped ? { skipShutdownDelay: true } : {}),
      ...(c.maxRunExceeded ? { killingDisplay: MAX_RUN_DURATION_REASON } : {}),
    };
    for (const n of current) send.push([n, kill]);
  }
  return { send, patch: { killQueue: queue, killCurrent: current } };
}

/** Hands an event to one task (once the tasks exist). */
export const forwardToTask = (c: Ctx, e: Ev): Step => (e.type !== 'toTask' || !c.spawned ? NONE : { send: [[e.taskName, e.event]] });

/** A restore that cannot go on (Nomad: SetClientStatus(failed), then Destroy). */
export const restoreFailed = (c: Ctx, e: unknown): Partial<Ctx> => ({
  statusOverride: { status: 'failed' as ClientStatus, description: errorText((e as { error?: unknown }).error) },
  version: c.version + 1,
});

/** A terminal update that says to skip shutdown delays. */
export const noteSkipDelays = (c: Ctx, e: Ev): Partial<Ctx> => ({ delaysSkipped: c.delaysSkipped || (e.type === 'update' && skipsShutdownDelay(e.alloc)) });

/** A destroy: every task's current run is its last (poststop tasks run once, then it ends). */
export const lastRuns = (c: Ctx): Step => (c.spawned ? { send: c.roles.map((r) => [r.name, { type: 'finalRun' }]) } : NONE);

/** Skips every shutdown delay from now on: the group's wait and each task's. */
export const skipDelays = (c: Ctx): Step =>
  c.delaysSkipped ? NONE : { patch: { delaysSkipped: true }, send: c.spawned ? c.roles.map((r) => [r.name, { type: 'skipShutdownDelay' }]) : [] };

/** Entering a state that keeps the max_run_duration timer: start it (only if there is a deadline). */
export const armMaxRun = (c: Ctx): Step =>
  // An idle child per alloc costs memory at 10,000 allocs: none without a deadline.
  c.maxRunDeadline === undefined ? { patch: { maxRunTimer: 'open' } } : { timer: { spawn: c.maxRunDeadline }, patch: { maxRunTimer: 'armed' } };

/**
 * A non-terminal update to a running alloc (Nomad's TaskRunner.Update): a task the update
 * dropped is killed with "update missing task"; kept tasks take their new kill settings; an
 * added task is not run; a changed max_run_duration re-arms its timer.
 */
export function applyTaskChanges(c: Ctx, e: Ev): Step {
  if (e.type !== 'update') return NONE;
  const patch: Partial<Ctx> = {};
  const send: Array<[string, TaskMachineEvent]> = [];
  const step: Step = { patch, send };
  const group = e.alloc.job.taskGroups.find((g) => g.name === e.alloc.taskGroup);
  if (group) {
    const removed = taskChanges(
      c.roles.map((r) => r.name),
      group,
    ).removed.filter((n) => !c.removedTasks.includes(n));
    if (removed.length) patch.removedTasks = [...c.removedTasks, ...removed];
    if (c.spawned) {
      for (const name of removed)
        if (!isDead(c, name)) send.push([name, { type: 'kill', time: e.time, reason: missingTaskEvent(e.time), noKillingEvent: true }]);
    } else if (removed.some((n) => !c.restoredHandles?.[n])) {
      // Not started yet: it never will be (Nomad kills its runner before it runs). A restored
      // task's process may be alive: it is killed once its actor exists.
      const taskStates = { ...c.taskStates };
      const eventSeq = { ...c.eventSeq };
      for (const name of removed) {
        if (c.restoredHandles?.[name]) continue;
        const st = appendEvent(taskStates[name]!, missingTaskEvent(e.time));
        taskStates[name] = { ...st, state: 'dead', finishedAt: st.finishedAt ?? e.time };
        eventSeq[name] = (eventSeq[name] ?? 0) + 1;
      }
      Object.assign(patch, { taskStates, eventSeq, version: c.version + 1 });
    }
    const next = taskSettingsFor(e.alloc, c.maxKillTimeoutMs).tasks;
    const tasks = { ...c.tasks };
    for (const r of c.roles) {
      const now = next[r.name];
      const was = c.tasks[r.name];
      if (!now || !was) continue;
      if (now.killTimeoutMs !== was.killTimeoutMs || now.killSignal !== was.killSignal || now.shutdownDelayMs !== was.shutdownDelayMs) {
        tasks[r.name] = { ...was, killTimeoutMs: now.killTimeoutMs, killSignal: now.killSignal, shutdownDelayMs: now.shutdownDelayMs };
        send.push([r.name, { type: 'settings', killTimeoutMs: now.killTimeoutMs, killSignal: now.killSignal, shutdownDelayMs: now.shutdownDelayMs ?? 0 }]);
      }
    }
    patch.tasks = tasks;
    patch.groupShutdownDelayMs = group.shutdownDelayMs ?? c.groupShutdownDelayMs;
  }
  const deadline = maxRunDeadline(e.alloc);
  if (deadline !== c.maxRunDeadline) {
    patch.maxRunDeadline = deadline;
    // The timer lives only while waiting or running (it is armed from the context on entry).
    if (c.maxRunTimer === 'armed') step.timer = { arm: deadline };
    else if (c.maxRunTimer === 'open' && deadline !== undefined) {
      step.timer = { spawn: deadline };
      patch.maxRunTimer = 'armed';
    }
  }
  return step;
}

/**
 * Nomad's Reconnect: each task gets a "Reconnected" event, the alloc takes the servers' new
 * index (nothing else), and the client view is recomputed from the task states (the tasks
 * kept running while the servers called the alloc unknown).
 */
export function reconnect(c: Ctx, e: Ev): Step {
  if (e.type !== 'update') return NONE;
  const ev = taskEvent('Reconnected', e.time);
  const patch: Partial<Ctx> = {
    alloc: { ...c.alloc, allocModifyIndex: e.alloc.allocModifyIndex },
    version: c.version + 1,
    now: Math.max(c.now, e.time),
  };
  if (c.spawned) return { send: c.roles.map((r) => [r.name, { type: 'append', event: ev }]), patch };
  const taskStates: Record<string, TaskState> = {};
  const eventSeq = { ...c.eventSeq };
  for (const [name, st] of Object.entries(c.taskStates)) {
    taskStates[name] = appendEvent(st, ev);
    eventSeq[name] = (eventSeq[name] ?? 0) + 1;
  }
  return { patch: { ...patch, taskStates, eventSeq } };
}

/** max_run_duration elapsed: complete, with Nomad's description; the stop kills poststop first. */
export const maxRunExceeded = (c: Ctx, e: Ev): Partial<Ctx> => ({
  maxRunExceeded: true,
  statusOverride: { status: 'complete' as ClientStatus, description: MAX_RUN_DURATION_REASON },
  version: c.version + 1,
  now: e.type === 'maxRunDuration.elapsed' ? Math.max(c.now, e.time) : c.now,
});

/** A group restart asked for: it waits for the group's delay and the preTaskRestart hooks. */
export function queueRestart(c: Ctx, e: Ev): Partial<Ctx> {
  if (e.type !== 'restartAll' && e.type !== 'restartRunning') return {};
  const failure = e.type === 'restartRunning' && e.failure === true ? { failure: true as const } : {};
  return { pendingRestarts: [...c.pendingRestarts, { kind: e.type === 'restartAll' ? 'all' : 'running', time: e.time, reason: e.reason, ...failure }] };
}

/** One task restarts at once (Nomad's RestartTask: no restart hook, no group delay). */
export const restartOne = (c: Ctx, e: Ev): Step =>
  e.type !== 'restartTask' || !c.spawned ? NONE : { send: [[e.taskName, { type: 'restart', time: e.time, reason: e.reason, failure: e.failure }]] };

/**
 * The group's delay and the preTaskRestart hooks are over: do the group restarts asked for
 * meanwhile, in order. A task that is not running ignores a `restart` (Nomad ignores its
 * ErrTaskNotRunning), so neither kind fails over a poststop task still waiting its turn.
 */
export function flushRestarts(c: Ctx): Step {
  const send: Array<[string, TaskMachineEvent]> = [];
  const patch: Partial<Ctx> = { pendingRestarts: [] };
  const names = c.roles.map((r) => r.name).filter((n) => !c.removedTasks.includes(n));
  for (const p of c.pendingRestarts) {
    if (p.kind === 'running') {
      for (const n of names) send.push([n, { type: 'restart', time: p.time, reason: p.reason, ...(p.failure ? { failure: true } : {}) }]);
      continue;
    }
    patch.coordinator = 'init' as CoordinatorState;
    for (const n of names) send.push([n, { type: 'gate', open: false }], [n, { type: 'restartAll', time: p.time, reason: p.reason }]);
  }
  return { send, patch };
}

/** Entering `stopping`: the max_run_duration timer keeps counting if it ever ran (it was armed while waiting or running). */
export const keepMaxRun = (c: Ctx): Step => (c.maxRunTimer === 'never' || c.maxRunExceeded ? NONE : armMaxRun(c));

/** The migrate_disk plan, from what the chart knows when its wait is over ("who is local" is its watch sources). */
export const planMigration = (c: Ctx): MigrationPlan =>
  migrationPlan({
    previousAllocId: c.alloc.previousAllocation,
    restored: c.restoring,
    disk: c.alloc.job.taskGroups.find((g) => g.name === c.alloc.taskGroup)?.ephemeralDisk,
    previousIsLocal: !!c.watchSources?.previousRunner,
    ...(c.previousNodeId ? { previousNodeId: c.previousNodeId } : {}),
  });

/** Moves `now` to the event's time when it is later. */
export const stampNow = (c: Ctx, e: Ev): Partial<Ctx> => ('time' in e && typeof e.time === 'number' ? { now: Math.max(c.now, e.time) } : {});

/** A stale update (older than the alloc applied): Nomad's client drops those. */
export const isStaleUpdate = (c: Ctx, e: Ev): boolean => e.type === 'update' && e.alloc.allocModifyIndex < c.alloc.allocModifyIndex;
