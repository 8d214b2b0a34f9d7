/**
 * The task chart's actions as named pure functions: each takes the context (and the event, or
 * the effect's output the chart hands it) and returns the context fields that change. The chart
 * (`chart.ts`) assigns what they return; `spec/machines/task/reducers-table.spec.ts` tests them
 * alone, one row per case.
 * @module
 */
import type { TaskEvent } from '../../model/types.ts';
import { decideRestart, newRestartTracker, type RestartInput } from '../policy/restarts.ts';
import { appendEvent, details, runOpen, taskEvent } from '../policy/task-events.ts';
import { shutdownDelayEvent } from '../policy/shutdown-delay.ts';
import {
  TEMPLATE_RESTART_REASON,
  TEMPLATE_SIGNAL_MESSAGE,
  templateActions,
  templateFailedEvent,
  templateScriptEvent,
  type TemplateEffectsOutput,
} from '../policy/template-change.ts';
import type { ExitOutput, PrestartOutput, RecoverOutput, StartOutput, TaskContext, TaskMachineEvent, TaskMachineInput } from './context.ts';

type Ctx = TaskContext;
type Ev = TaskMachineEvent;
type Patch = Partial<Ctx>;
type Kill = Extract<Ev, { type: 'kill' }>;

/** Why a restored run open in the task state but without a usable handle is started again. */
export const LOST_RUN = 'failed to restore task: the state store had no usable handle for it; starting it again';

/** The chart's initial context for its input. */
export function initialContext(input: TaskMachineInput): Ctx {
  return {
    allocId: input.allocId,
    taskName: input.taskName,
    role: input.role,
    restart: input.restart,
    tracker: newRestartTracker(input.now),
    killTimeoutMs: input.killTimeoutMs,
    killSignal: input.killSignal,
    shutdownDelayMs: input.shutdownDelayMs ?? 0,
    skipShutdownDelay: false,
    finalRun: false,
    state: input.initialState,
    eventSeq: input.eventSeq ?? input.initialState.events.length,
    gateOpen: input.gateOpen,
    attempt: 0,
    now: input.now,
    killAfterRestart: false,
    killRequested: false,
    hooks: input.hooks ?? {},
    prestarted: false,
    lostRun: !!input.lostRun,
    ...(input.restoredHandle ? { handle: input.restoredHandle } : {}),
  };
}

// --- Helpers the reducers share -------------------------------------------------------------

/** Appends one event: the state keeps the last 10, the count goes on, time never goes back. */
export const withEvent = (c: Ctx, ev: TaskEvent): Patch => ({ state: appendEvent(c.state, ev), eventSeq: c.eventSeq + 1, now: Math.max(c.now, ev.time) });

/** Appends several events in order. */
export function appendAll(c: Ctx, evs: TaskEvent[]): Patch {
  let state = c.state;
  let now = c.now;
  for (const ev of evs) {
    state = appendEvent(state, ev);
    now = Math.max(now, ev.time);
  }
  return { state, eventSeq: c.eventSeq + evs.length, now };
}

/** What a kill appends: its reason while the task is live, then "Killing" unless the run ended. */
export function killEvents(c: Ctx, e: Kill): TaskEvent[] {
  const evs: TaskEvent[] = [];
  if (c.state.state !== 'dead' && e.reason) evs.push({ ...e.reason, time: e.time });
  if (c.state.finishedAt === undefined && !e.noKillingEvent) {
    evs.push(
      taskEvent('Killing', e.time, {
        details: { ...details.killTimeout(c.killTimeoutMs), ...(e.killReason ? { kill_reason: e.killReason } : {}) },
        ...(e.killingDisplay ? { displayMessage: e.killingDisplay } : {}),
      }),
    );
  }
  return evs;
}

/** The "Terminated" event of an exit. */
export function exitEvent(out: ExitOutput): TaskEvent {
  const r = out.result;
  return taskEvent('Terminated', out.time, { details: details.exit(r.exitCode, r.signal, r.err, r.oomKilled) });
}

/** The restart policy's input for an exit. */
const exitInput = (r: ExitOutput['result']): RestartInput => ({ kind: 'exit', exitCode: r.exitCode, signal: r.signal, err: r.err });

/** Dead, with the time it finished (kept if the run already ended), and no handle. */
export function toDead(c: Ctx, time: number): Patch {
  return { state: { ...c.state, state: 'dead', finishedAt: c.state.finishedAt ?? time }, handle: undefined };
}

/** Applies `patch` over `c` (a reducer that appends, then changes the state it appended to). */
const over = (c: Ctx, patch: Patch): Ctx => ({ ...c, ...patch });

/** Appends `evs`, then dead at `time` (one append: the state keeps the events its eventSeq counts). */
function appendThenDead(c: Ctx, evs: TaskEvent[], time: number): Patch {
  const next = over(c, appendAll(c, evs));
  return { ...next, ...toDead(next, time) };
}

/** Appends `ev`, then sets the task state's `state` to `pending`. */
function appendThenPending(c: Ctx, ev: TaskEvent): Patch {
  const next = over(c, withEvent(c, ev));
  return { ...next, state: { ...next.state, state: 'pending' } };
}

/** The restart delay the decision asks for (0 without one). */
export const restartDelayMs = (c: Ctx): number => (c.decision && 'delayMs' in c.decision ? c.decision.delayMs : 0);

/** The restart jitter an effect's output carries (the runtime's random draw); 0 when absent. */
export function jitterOf(event: object): number {
  const out = 'output' in event ? event.output : undefined;
  return typeof out === 'object' && out !== null && 'jitter' in out && typeof out.jitter === 'number' ? out.jitter : 0;
}

// --- Events anywhere --------------------------------------------------------------------------

/** A `gate` event: the lifecycle gate opened or closed. */
export const setGate = (_c: Ctx, e: Ev): Patch => (e.type === 'gate' ? { gateOpen: e.open } : {});

/** An `append` event: the given event on the task's events. */
export const appendGiven = (c: Ctx, e: Ev): Patch => (e.type === 'append' ? withEvent(c, e.event) : {});

/** A `settings` event: the next kill uses these. */
export const applySettings = (_c: Ctx, e: Ev): Patch =>
  e.type === 'settings' ? { killTimeoutMs: e.killTimeoutMs, killSignal: e.killSignal, shutdownDelayMs: e.shutdownDelayMs } : {};

/** Shutdown delays are skipped from now on. */
export const markSkipShutdownDelay = (): Patch => ({ skipShutdownDelay: true });

/** The current run is the last. */
export const markFinalRun = (): Patch => ({ finalRun: true });

/** The saved handle is dropped (its run is over, or never started). */
export const dropHandle = (): Patch => ({ handle: undefined });

// --- Kills ------------------------------------------------------------------------------------

/** A kill where no process exists: its events and "Killed", then dead. */
export const killPending = (c: Ctx, e: Ev): Patch => (e.type !== 'kill' ? {} : appendThenDead(c, [...killEvents(c, e), taskEvent('Killed', e.time)], e.time));

/** A kill of a live process: its events (the kill itself is the effect's). */
export const appendKill = (c: Ctx, e: Ev): Patch => (e.type === 'kill' ? appendAll(c, killEvents(c, e)) : {});

/** A kill arrived while a restart-kill was in flight. */
export const markKillAfterRestart = (): Patch => ({ killAfterRestart: true });

/** A kill arrived while a start or recovery was in flight. */
export const markKillRequested = (): Patch => ({ killRequested: true });

/** Records a skip asked for by the kill itself. */
export const takeKillSkip = (c: Ctx, e: Ev): Patch =>
  e.type === 'kill' && e.skipShutdownDelay ? { skipShutdownDelay: true } : { skipShutdownDelay: c.skipShutdownDelay };

/**
 * Nomad's handleKill: the task goes back to pending with "Waiting for shutdown delay" (or
 * "Skipping shutdown delay") before it is signalled.
 */
export function enterShutdownDelay(c: Ctx, e: Ev): Patch {
  const time = e.type === 'kill' ? e.time : c.now;
  return appendThenPending(c, shutdownDelayEvent(c.shutdownDelayMs, c.skipShutdownDelay, time));
}

/** The shutdown_delay ran out: the chart's time moves on by it. */
export const shutdownDelayElapsed = (c: Ctx): Patch => ({ now: c.now + c.shutdownDelayMs });

/** The kill finished: Terminated, then Killed, then dead. */
export const killedDead = (c: Ctx, out: ExitOutput): Patch => appendThenDead(c, [exitEvent(out), taskEvent('Killed', out.time)], out.time);

/** The start or recovery settled after a kill with nothing left running: Killed, dead. */
export const killedBeforeRunning = (c: Ctx, out: { time: number; setupEvents?: TaskEvent[] }): Patch =>
  appendThenDead(c, [...(out.setupEvents ?? []), taskEvent('Killed', out.time)], out.time);

/**
 * A kill met a reattach that failed: the run the saved handle named is over (its process is
 * gone or was killed by the recovery), so a run that had started ends with Terminated first.
 */
export function killedAfterLostRun(c: Ctx, out: { time: number; error?: string }): Patch {
  const ended = runOpen(c.state) ? [exitEvent({ result: { exitCode: -1, signal: 0, err: out.error ?? 'failed to restore task' }, time: out.time })] : [];
  return appendThenDead(c, [...ended, taskEvent('Killed', out.time)], out.time);
}

// --- Signals and restarts ---------------------------------------------------------------------

/** "Signaling" on the task's events (the signal is carried by a `signal` event). */
export const appendSignaling = (c: Ctx, e: Ev): Patch =>
  e.type === 'signal' ? withEvent(c, taskEvent('Signaling', e.time, { details: { task_signal: e.signal } })) : {};

/** "Restart Signaled"; the restart policy then sees a triggered restart. */
export function restartSignaled(c: Ctx, e: Ev): Patch {
  if (e.type !== 'restart' && e.type !== 'restartAll') return {};
  const ev = taskEvent('Restart Signaled', e.time, { details: e.reason ? { restart_reason: e.reason } : {} });
  return { ...withEvent(c, ev), lastInput: { kind: 'restartTriggered', failure: e.type === 'restart' && !!e.failure } };
}

/** A re-render asked for a restart: "Restart Signaled" with Nomad's reason, not a failure. */
export function templateRestartSignaled(c: Ctx, e: Ev): Patch {
  if (e.type !== 'template.changed') return {};
  const ev = taskEvent('Restart Signaled', e.time, { details: { restart_reason: TEMPLATE_RESTART_REASON } });
  return { ...withEvent(c, ev), lastInput: { kind: 'restartTriggered', failure: false } };
}

/** "Signaling" ("Template re-rendered") for each distinct change_signal of the changed templates. */
export function appendTemplateSignaling(c: Ctx, e: Ev): Patch {
  if (e.type !== 'template.changed') return {};
  const evs = templateActions(e.changes).signals.map((sig) =>
    taskEvent('Signaling', e.time, { displayMessage: TEMPLATE_SIGNAL_MESSAGE, details: { task_signal: sig } }),
  );
  return evs.length ? appendAll(c, evs) : {};
}

/** A re-render's change scripts ran: one event each (a fatal one fails the task). */
export function appendScriptResult(c: Ctx, e: Ev): Patch {
  const out = (e as { output?: TemplateEffectsOutput }).output;
  return out?.scripts.length ? appendAll(c, out.scripts.map(templateScriptEvent)) : {};
}

/** A re-render failed: "Template failed: ...", and the task fails. */
export const appendTemplateFailed = (c: Ctx, e: Ev): Patch => (e.type === 'template.failed' ? withEvent(c, templateFailedEvent(e.error, e.time)) : {});

/** A dead task re-run by restartAll: "Restart Signaled", pending, gate closed, the last life's kill forgotten. */
export function reviveDead(c: Ctx, e: Ev): Patch {
  if (e.type !== 'restartAll') return {};
  const ev = taskEvent('Restart Signaled', e.time, { details: e.reason ? { restart_reason: e.reason } : {} });
  const appended = withEvent(c, ev);
  const { finishedAt: _f, ...rest } = over(c, appended).state;
  // A kill of the last life is over: the revived run must not inherit it.
  return {
    ...appended,
    state: { ...rest, state: 'pending', failed: false },
    gateOpen: false,
    // A forced restart does not reset the tracker (Nomad's ForceRestart keeps its count).
    killRequested: false,
    killAfterRestart: false,
  };
}

// --- Restore ----------------------------------------------------------------------------------

/** A restored handle with a recorded exit the state still shows open: that exit, reported now. */
export function bootExited(c: Ctx): Patch {
  const result = c.handle?.exited;
  if (!result) return {};
  return { ...withEvent(c, exitEvent({ result, time: c.now })), handle: undefined, lastInput: exitInput(result) };
}

/** A run open in the state with no usable handle: "Failed Restoring Task", pending again. */
export const restoreLost = (c: Ctx): Patch => appendThenPending(c, taskEvent('Failed Restoring Task', c.now, { displayMessage: LOST_RUN }));

/**
 * Reattached: take the (completed) handle. A run whose start the last host never reported
 * (it died mid-start) did start: it gets its Started now, so every Terminated ends a start.
 */
export function takeRecovered(c: Ctx, out: RecoverOutput): Patch {
  if (!out.ok) return {};
  const handle = out.handle ? { handle: out.handle } : {};
  if (c.state.state === 'running') return handle;
  // A task waiting out its shutdown_delay is `pending` with its run's Started already
  // reported: it only goes back to running.
  const types = c.state.events.map((e) => e.type);
  if (types.lastIndexOf('Started') >= types.lastIndexOf('Task Setup')) return { ...handle, state: { ...c.state, state: 'running' } };
  const next = over(c, withEvent(c, taskEvent('Started', out.time)));
  return { ...next, ...handle, state: { ...next.state, state: 'running', startedAt: next.state.startedAt ?? out.time } };
}

/** The task could not be reattached: "Failed Restoring Task", and the restart policy decides. */
export function recoverFailed(c: Ctx, out: RecoverOutput): Patch {
  if (out.ok) return {};
  return {
    ...withEvent(c, taskEvent('Failed Restoring Task', out.time, { message: out.error })),
    handle: undefined,
    lastInput: { kind: 'exit', exitCode: -1, signal: 0, err: out.error },
  };
}

// --- Starts -----------------------------------------------------------------------------------

/** The "Task Setup" event that begins an attempt. */
const taskSetup = (c: Ctx): TaskEvent => taskEvent('Task Setup', c.now, { message: 'Building Task Directory' });

/**
 * A new start: the attempt count and "Task Setup" (Building Task Directory), once per attempt:
 * in `prestart` when the task has prestart work, else in `starting`.
 */
export function beginAttempt(c: Ctx): Patch {
  if (c.prestarted) return { prestarted: false };
  return { attempt: c.attempt + 1, prestarted: false, ...withEvent(c, taskSetup(c)) };
}

/** Begins an attempt in `prestart`: `starting` then does not begin another. */
export const beginPrestart = (c: Ctx): Patch => ({ attempt: c.attempt + 1, prestarted: true, ...withEvent(c, taskSetup(c)) });

/** The prestart hooks succeeded: their events. */
export const prestartDone = (c: Ctx, out: PrestartOutput): Patch => appendAll(c, out.events);

/** The prestart hooks failed: their events, and a start error for the restart policy. */
export function prestartFailed(c: Ctx, out: PrestartOutput): Patch {
  if (out.ok) return {};
  return { prestarted: false, ...appendAll(c, out.events), lastInput: { kind: 'startError', recoverable: out.recoverable, message: out.error } };
}

/** The start succeeded: Started, running, with its handle. */
export function started(c: Ctx, out: StartOutput): Patch {
  if (!out.ok) return {};
  const next = over(c, appendAll(c, [...(out.setupEvents ?? []), taskEvent('Started', out.time)]));
  return { ...next, handle: out.handle, state: { ...next.state, state: 'running', startedAt: next.state.startedAt ?? out.time } };
}

/** The start failed: "Failed Validation" (never retried) or "Driver Failure", for the restart policy. */
export function startFailed(c: Ctx, out: StartOutput): Patch {
  if (out.ok) return {};
  const ev = out.validation
    ? taskEvent('Failed Validation', out.time, { details: { validation_error: out.error } })
    : taskEvent('Driver Failure', out.time, { details: { driver_error: out.error } });
  return {
    ...appendAll(c, [...(out.setupEvents ?? []), ev]),
    lastInput: { kind: 'startError', recoverable: out.recoverable && !out.validation, message: out.error },
  };
}

// --- Exits ------------------------------------------------------------------------------------

/** The process exited on its own: Terminated, and the restart policy sees the exit. */
export const runExited = (c: Ctx, out: ExitOutput): Patch => ({ ...withEvent(c, exitEvent(out)), lastInput: exitInput(out.result) });

/** A restart's kill finished: Terminated (the restart policy sees the triggered restart). */
export const restartKilled = (c: Ctx, out: ExitOutput): Patch => ({ ...withEvent(c, exitEvent(out)), handle: undefined });

/** Entering `exited`: the restart policy decides (with the effect's jitter draw). */
export function decideExit(c: Ctx, jitter: number): Patch {
  const { decision, next } = decideRestart(c.restart, c.tracker, c.lastInput ?? { kind: 'exit', exitCode: 0, signal: 0 }, c.now, () => jitter);
  return { decision, tracker: next, lastInput: undefined, handle: undefined };
}

/** Dead now (the chart's time). */
export const deadNow = (c: Ctx): Patch => toDead(c, c.now);

/** The policy restarts the task: "Restarting", pending until the delay is over. */
export function scheduleRestart(c: Ctx): Patch {
  const d = c.decision;
  if (d?.state !== 'Restarting') return {};
  return appendThenPending(c, taskEvent('Restarting', c.now, { details: details.restart(d.delayMs, d.reason) }));
}

/** The policy does not restart the task: "Not Restarting", dead (failed). */
export function notRestarting(c: Ctx): Patch {
  const d = c.decision;
  if (d?.state !== 'Not Restarting') return {};
  return appendThenDead(c, [taskEvent('Not Restarting', c.now, { details: { restart_reason: d.reason, fails_task: 'true' } })], c.now);
}

/** The restart delay ran out: the chart's time moves on by it. */
export const restartDelayElapsed = (c: Ctx): Patch => ({ now: c.now + restartDelayMs(c) });

/** A destroy while waiting to restart: dead, and this run was the last. */
export const finalRunDead = (c: Ctx): Patch => ({ ...toDead(c, c.now), finalRun: true });
