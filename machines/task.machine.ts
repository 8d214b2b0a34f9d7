/**
 * The task machine: one task of an allocation (Nomad's TaskRunner run loop) as a pure statechart.
 * Effects (starting the driver, waiting, killing) are actors referenced by name and provided by
 * the runtime (`actors/runner/task-actors.ts`); time arrives on events, so the machine has no
 * clock of its own except the restart delay, which goes through xstate's (injectable) clock.
 *
 * ```
 *            gate open                 started               exit
 *  pending ───────────► starting ─────────────► running ─────────► exited ─┐
 *    ▲                     │ start error                                   │ restart tracker
 *    │                     └──────────────────────────────────► exited ────┤
 *    │   delay                                                             │
 *    └──────────── restarting ◄──── Restarting ────────────────────────────┤
 *                                                                          │ Not Restarting /
 *   kill (running) ──► killing ──► dead ◄──────────────────────────────────┘ Terminated
 *   kill (pending, restarting) ──► dead          (no process exists)
 *   kill (starting, recovering) ──► abort the effect, stay until it settles ──► killing | dead
 * ```
 * A restored task starts in `boot`: dead stays dead; a saved exit the state still shows running
 * goes to `exited` (reported once); a saved exit already reported goes to `pending`; any other
 * saved handle (one saved before its start included) is reattached in `recovering`; a run the
 * state shows open without a handle (a damaged store) gets "Failed Restoring Task" and starts again.
 * `signal` in `running` spawns a `signalTask` child; its done or error answers the caller.
 * Every change is reported to the parent alloc machine as a `task.state` event.
 *
 * Ordering invariant (terminal truth): the task is reported `dead` only from a state in which
 * no process of it can exist: after `killTask`/`waitTask` returned (the process is gone), or
 * from `pending`/`restarting`, or after a start or recovery settled without a process. A
 * process exists before a driver's start returns, so a kill never leaves `starting` early.
 * @module
 */
import { missingActor } from './missing-actor.ts';
import { and, or, assign, fromCallback, fromPromise, sendParent, sendTo, setup, spawnChild, stopChild } from 'xstate';
import type { TaskEvent, TaskState } from '../model/types.ts';
import type { ExitResult, TaskHandle } from '../model/task-handle.ts';
import { decideRestart, newRestartTracker, type RestartDecision, type RestartInput, type RestartSubject, type RestartTrackerState } from './policy/restarts.ts';
import { appendEvent, details, runOpen, taskEvent } from './policy/task-events.ts';
import { shutdownDelayEvent } from './policy/shutdown-delay.ts';
import type { TaskRole } from './policy/task-roles.ts';

/** Input of the task machine (plain data). */
export interface TaskMachineInput {
  allocId: string;
  taskName: string;
  role: TaskRole;
  restart: RestartSubject;
  /** min(task.killTimeoutMs ?? 5000, client maxKillTimeoutMs). */
  killTimeoutMs: number;
  killSignal: string;
  /** Nomad's task `shutdown_delay`: how long a kill waits before signalling (default 0: none). */
  shutdownDelayMs?: number;
  initialState: TaskState;
  gateOpen: boolean;
  now: number;
  /** A handle saved by an earlier client: reattach to the task instead of starting it. */
  restoredHandle?: TaskHandle;
  /**
   * The restore found this task's process alive without a usable handle and stopped it: its run
   * is over even if the saved state never got as far as saying it started.
   */
  lostRun?: boolean;
  /**
   * Events appended so far (the state keeps only the last 10): the count continues from here, so
   * the alloc's per-task count and this one never disagree. Default `initialState.events.length`.
   */
  eventSeq?: number;
  /**
   * Task-runner hooks the task has work for: `prestart` (artifacts) runs `prestartTask` before
   * each start. (`taskServices`, the poststart hook, runs in every `running`; it knows when it
   * has nothing to do.)
   */
  hooks?: TaskHooks;
}

/** Which task-runner hooks have work for a task (plain data, from its definition). */
export interface TaskHooks {
  /** Fetch artifacts (and build the task dir) before each start. */
  prestart?: boolean;
}

/** The task machine's context (plain data). */
export interface TaskContext {
  allocId: string;
  taskName: string;
  role: TaskRole;
  restart: RestartSubject;
  tracker: RestartTrackerState;
  killTimeoutMs: number;
  killSignal: string;
  shutdownDelayMs: number;
  /** The servers asked to skip shutdown delays, or the alloc is being destroyed. */
  skipShutdownDelay: boolean;
  /** No restart after this run (the alloc is being destroyed). */
  finalRun: boolean;
  state: TaskState;
  /** Total events ever appended (the state keeps only the last 10). */
  eventSeq: number;
  gateOpen: boolean;
  handle?: TaskHandle;
  attempt: number;
  now: number;
  lastInput?: RestartInput;
  decision?: RestartDecision;
  /** A kill arrived while a restart-kill was in flight. */
  killAfterRestart: boolean;
  /**
   * A kill arrived while the task was starting or being reattached: the start (or recovery) was
   * asked to abort, and whatever it leaves behind is killed before the task is reported dead.
   */
  killRequested: boolean;
  hooks: TaskHooks;
  /** This attempt began in `prestart` (its "Task Setup" is appended). */
  prestarted: boolean;
  /** See {@link TaskMachineInput.lostRun}. */
  lostRun: boolean;
}

/**
 * Result of the `prestartTask` actor (the prestart hooks: task dir, artifacts). Never rejects:
 * a failure carries the task event that says why ("Failed Artifact Download") and is a
 * recoverable start error for the restart policy, as in Nomad.
 */
export type PrestartOutput =
  { ok: true; time: number; events: TaskEvent[] } | { ok: false; time: number; events: TaskEvent[]; error: string; recoverable: boolean; jitter?: number };

/** Result of the `startTask` actor: never rejects, so failures stay plain data. */
export type StartOutput =
  | { ok: true; handle: TaskHandle; time: number; setupEvents?: TaskEvent[] }
  | { ok: false; time: number; error: string; recoverable: boolean; validation?: boolean; setupEvents?: TaskEvent[]; jitter?: number };

/**
 * Result of the `recoverTask` actor. `handle` is the reattached handle (completed when the saved
 * one was saved before its start); `notStarted`: that start never got as far as a process.
 */
export type RecoverOutput = { ok: true; time: number; handle?: TaskHandle } | { ok: false; time: number; error: string; notStarted?: boolean; jitter?: number };

/** Result of the `waitTask` and `killTask` actors. */
export interface ExitOutput {
  result: ExitResult;
  time: number;
  /** A uniform [0, 1) draw for the restart jitter (ClientOptions.random); 0 when absent. */
  jitter?: number;
}

/** Events the task machine accepts. */
export type TaskMachineEvent =
  | { type: 'gate'; open: boolean }
  /** Kill the task; `reason` (e.g. "Sibling Task Failed") is appended first when the task is live. */
  | {
      type: 'kill';
      time: number;
      reason?: TaskEvent;
      killReason?: string;
      /** Display message of the "Killing" event (max_run_duration says why). */
      killingDisplay?: string;
      /** No "Killing" event: `reason` says it all ("update missing task"). */
      noKillingEvent?: boolean;
      /** Skip the task's shutdown_delay (the servers' `noShutdownDelay`, or a destroy). */
      skipShutdownDelay?: boolean;
    }
  /** Stop waiting out the shutdown_delay: kill now. */
  | { type: 'skipShutdownDelay' }
  /** The alloc is being destroyed: the current run is the last (a poststop task runs once). */
  | { type: 'finalRun' }
  /** The task's definition changed in place: the next kill uses these. */
  | { type: 'settings'; killTimeoutMs: number; killSignal: string; shutdownDelayMs: number }
  /** Restart a running task ("Restart Signaled" with the given reason). */
  | { type: 'restart'; time: number; reason?: string; failure?: boolean }
  /** Re-run a dead task too (alloc-level restartAll). */
  | { type: 'restartAll'; time: number; reason?: string }
  /** Append an event without changing state (hook messages, ...). */
  | { type: 'append'; event: TaskEvent }
  /**
   * Send `signal` to the running task: "Signaling", then a `signalTask` child with id
   * `signal.<requestId>` whose done or error is the caller's answer. Not running: no child.
   */
  | { type: 'signal'; time: number; signal: string; requestId: string };

type Ctx = TaskContext;

/** What a `signal` does wherever the task's process may run: record it, report, send it. */
const SIGNAL_TASK = ['appendSignaling', 'report', 'spawnSignal'] as const;

/** What a kill of the task's process needs (its `killing` and `restartKilling` states). */
const killInput = ({ context }: { context: TaskContext }) => ({
  allocId: context.allocId,
  taskName: context.taskName,
  handle: context.handle!,
  timeoutMs: context.killTimeoutMs,
  signal: context.killSignal,
});

/** Why a restored run open in the task state but without a usable handle is started again. */
const LOST_RUN = 'failed to restore task: the state store had no usable handle for it; starting it again';

const withEvent = (c: Ctx, ev: TaskEvent): Partial<Ctx> => ({ state: appendEvent(c.state, ev), eventSeq: c.eventSeq + 1, now: Math.max(c.now, ev.time) });

/** Appends several events in order. */
function appendAll(c: Ctx, evs: TaskEvent[]): Partial<Ctx> {
  let state = c.state;
  let now = c.now;
  for (const ev of evs) {
    state = appendEvent(state, ev);
    now = Math.max(now, ev.time);
  }
  return { state, eventSeq: c.eventSeq + evs.length, now };
}

function killEvents(c: Ctx, e: Extract<TaskMachineEvent, { type: 'kill' }>): TaskEvent[] {
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

function exitEvent(out: ExitOutput): TaskEvent {
  const r = out.result;
  return taskEvent('Terminated', out.time, { details: details.exit(r.exitCode, r.signal, r.err, r.oomKilled) });
}

function toDead(c: Ctx, time: number): Partial<Ctx> {
  return { state: { ...c.state, state: 'dead', finishedAt: c.state.finishedAt ?? time }, handle: undefined };
}

/** The task statechart. Provide `startTask`, `waitTask` and `killTask` actors to run it. */
export const taskMachine = setup({
  types: {
    context: {} as TaskContext,
    input: {} as TaskMachineInput,
    events: {} as TaskMachineEvent,
  },
  actors: {
    // Placeholders: the runtime provides the real logic with `.provide()`; unprovided, they fail
    // with a MissingActorError.
    startTask: missingActor<import('xstate').PromiseActorLogic<StartOutput, { allocId: string; taskName: string; attempt: number }>>('task', 'startTask'),
    waitTask: missingActor<import('xstate').PromiseActorLogic<ExitOutput, { allocId: string; taskName: string; handle: TaskHandle }>>('task', 'waitTask'),
    killTask: missingActor<
      import('xstate').PromiseActorLogic<ExitOutput, { allocId: string; taskName: string; handle: TaskHandle; timeoutMs: number; signal: string }>
    >('task', 'killTask'),
    recoverTask: missingActor<import('xstate').PromiseActorLogic<RecoverOutput, { allocId: string; taskName: string; handle: TaskHandle }>>(
      'task',
      'recoverTask',
    ),
    signalTask: missingActor<import('xstate').PromiseActorLogic<void, { allocId: string; taskName: string; handle: TaskHandle; signal: string }>>(
      'task',
      'signalTask',
    ),
    // Hooks default to doing nothing: a chart run without them (specs, the simulator) starts as before.
    prestartTask: fromPromise<PrestartOutput, { allocId: string; taskName: string; attempt: number; now: number }>(async ({ input }) => ({
      ok: true,
      time: input.now,
      events: [],
    })),
    /**
     * While the task runs: registers its services, runs their checks, and may send `restart`
     * (check_restart); stopping it (leaving `running`) deregisters them before any kill.
     */
    taskServices: fromCallback<TaskMachineEvent, { allocId: string; taskName: string; startedAt: number }>(() => undefined),
  },
  delays: {
    shutdownDelay: ({ context }) => context.shutdownDelayMs,
    restartDelay: ({ context }) => (context.decision && 'delayMs' in context.decision ? context.decision.delayMs : 0),
  },
  guards: {
    gateOpen: ({ context }) => context.gateOpen,
    deadAlready: ({ context }) => context.state.state === 'dead',
    hasRestoredHandle: ({ context }) => !!context.handle,
    hasExitedHandle: ({ context }) => !!context.handle?.exited,
    /** The latest run started and has not ended (a task in its shutdown delay is `pending` yet runs). */
    runOpen: ({ context }) => runOpen(context.state),
    notStarted: (_, out: RecoverOutput) => !out.ok && !!out.notStarted,
    recoverOk: (_, out: RecoverOutput) => out.ok,
    startOk: (_, out: StartOutput) => out.ok,
    restarting: ({ context }) => context.decision?.state === 'Restarting',
    notRestarting: ({ context }) => context.decision?.state === 'Not Restarting',
    killAfterRestart: ({ context }) => context.killAfterRestart,
    /** The kill meets a shutdown_delay (waited, or skipped with Nomad's "Skipping" event). */
    hasShutdownDelay: ({ context }) => context.shutdownDelayMs > 0,
    skipShutdownDelay: ({ context }) => context.skipShutdownDelay,
    killRequested: ({ context }) => context.killRequested,
    startOkAfterKill: ({ context }, out: StartOutput) => out.ok && context.killRequested,
    recoverOkAfterKill: ({ context }, out: RecoverOutput) => out.ok && context.killRequested,
  },
  actions: {
    report: sendParent(({ context }) => ({ type: 'task.state', taskName: context.taskName, state: context.state, eventSeq: context.eventSeq }) as never),
    setGate: assign(({ event }) => (event.type === 'gate' ? { gateOpen: event.open } : {})),
    appendGiven: assign(({ context, event }) => (event.type === 'append' ? withEvent(context, event.event) : {})),
    killPending: assign(({ context, event }) => {
      if (event.type !== 'kill') return {};
      // One append for Killing and Killed, then dead over that state: the state must keep the
      // events its eventSeq counts (else the bus republishes an old event in Killed's place).
      const c = { ...context, ...appendAll(context, [...killEvents(context, event), taskEvent('Killed', event.time)]) };
      return { ...c, ...toDead(c, event.time) };
    }),
    appendKill: assign(({ context, event }) => (event.type === 'kill' ? appendAll(context, killEvents(context, event)) : {})),
    markKillAfterRestart: assign({ killAfterRestart: true }),
    /** Records a skip asked for by the kill itself. */
    takeKillSkip: assign(({ context, event }) =>
      event.type === 'kill' && event.skipShutdownDelay ? { skipShutdownDelay: true } : { skipShutdownDelay: context.skipShutdownDelay },
    ),
    /**
     * Nomad's handleKill: the task goes back to pending with "Waiting for shutdown delay" (or
     * "Skipping shutdown delay") before it is signalled.
     */
    enterShutdownDelay: assign(({ context, event }) => {
      const time = event.type === 'kill' ? event.time : context.now;
      const c = { ...context, ...withEvent(context, shutdownDelayEvent(context.shutdownDelayMs, context.skipShutdownDelay, time)) };
      return { ...c, state: { ...c.state, state: 'pending' as const } };
    }),
    markSkipShutdownDelay: assign({ skipShutdownDelay: true }),
    /** "Signaling" on the task's events (the signal is carried by a `signal` event). */
    appendSignaling: assign(({ context, event }) =>
      event.type === 'signal' ? withEvent(context, taskEvent('Signaling', event.time, { details: { task_signal: event.signal } })) : {},
    ),
    /** A `signalTask` child `signal.<requestId>`: its done or error answers the caller. */
    spawnSignal: spawnChild('signalTask', {
      id: ({ event }) => `signal.${(event as { requestId: string }).requestId}`,
      input: ({ context, event }) => ({
        allocId: context.allocId,
        taskName: context.taskName,
        handle: context.handle!,
        signal: (event as { signal: string }).signal,
      }),
    }),
    applySettings: assign(({ event }) =>
      event.type === 'settings' ? { killTimeoutMs: event.killTimeoutMs, killSignal: event.killSignal, shutdownDelayMs: event.shutdownDelayMs } : {},
    ),
    markKillRequested: assign({ killRequested: true }),
    /**
     * A new start: the attempt count and "Task Setup" (Building Task Directory), once per attempt:
     * in `prestart` when the task has prestart work, else in `starting`.
     */
    beginAttempt: assign(({ context }) => {
      if (context.prestarted) return { prestarted: false };
      return {
        attempt: context.attempt + 1,
        prestarted: false,
        ...withEvent(context, taskEvent('Task Setup', context.now, { message: 'Building Task Directory' })),
      };
    }),
    /** Begins an attempt in `prestart`: `starting` then does not begin another. */
    beginPrestart: assign(({ context }) => ({
      attempt: context.attempt + 1,
      prestarted: true,
      ...withEvent(context, taskEvent('Task Setup', context.now, { message: 'Building Task Directory' })),
    })),
    forgetChild: stopChild(({ event }) => (event as unknown as { actorId: string }).actorId),
    /**
     * Reattached: take the (completed) handle. A run whose start the last host never reported
     * (it died mid-start) did start: it gets its Started now, so every Terminated ends a start.
     */
    takeRecovered: assign(({ context, event }) => {
      const out = (event as { output?: RecoverOutput }).output;
      if (!out?.ok) return {};
      const handle = out.handle ? { handle: out.handle } : {};
      if (context.state.state === 'running') return handle;
      // A task waiting out its shutdown_delay is `pending` with its run's Started already
      // reported: it only goes back to running.
      const types = context.state.events.map((e) => e.type);
      if (types.lastIndexOf('Started') >= types.lastIndexOf('Task Setup')) return { ...handle, state: { ...context.state, state: 'running' as const } };
      const c = { ...context, ...withEvent(context, taskEvent('Started', out.time)) };
      return { ...c, ...handle, state: { ...c.state, state: 'running' as const, startedAt: c.state.startedAt ?? out.time } };
    }),
    /** Tells the in-flight start or recovery (invoked as `effect`) to abort; it still settles. */
    abortEffect: sendTo('effect', { type: 'abort' }),
    /** The start or recovery settled after a kill with nothing left running: Killed, dead. */
    killedBeforeRunning: assign(({ context }, out: { time: number; setupEvents?: TaskEvent[] }) => {
      const c = { ...context, ...appendAll(context, [...(out.setupEvents ?? []), taskEvent('Killed', out.time)]) };
      return { ...c, ...toDead(c, out.time) };
    }),
    /**
     * A kill met a reattach that failed: the run the saved handle named is over (its process is
     * gone or was killed by the recovery), so a run that had started ends with Terminated first.
     */
    killedAfterLostRun: assign(({ context }, out: { time: number; error?: string }) => {
      const ended = runOpen(context.state)
        ? [exitEvent({ result: { exitCode: -1, signal: 0, err: out.error ?? 'failed to restore task' }, time: out.time })]
        : [];
      const c = { ...context, ...appendAll(context, [...ended, taskEvent('Killed', out.time)]) };
      return { ...c, ...toDead(c, out.time) };
    }),
    /** The start succeeded: Started, running, with its handle. */
    started: assign(({ context }, out: StartOutput) => {
      if (!out.ok) return {};
      const c = { ...context, ...appendAll(context, [...(out.setupEvents ?? []), taskEvent('Started', out.time)]) };
      return { ...c, handle: out.handle, state: { ...c.state, state: 'running' as const, startedAt: c.state.startedAt ?? out.time } };
    }),
    /** The kill finished: Terminated, then Killed, then dead. */
    killedDead: assign(({ context }, out: ExitOutput) => {
      const c = { ...context, ...appendAll(context, [exitEvent(out), taskEvent('Killed', out.time)]) };
      return { ...c, ...toDead(c, out.time) };
    }),
    restartSignaled: assign(({ context, event }) => {
      if (event.type !== 'restart' && event.type !== 'restartAll') return {};
      const ev = taskEvent('Restart Signaled', event.time, { details: event.reason ? { restart_reason: event.reason } : {} });
      return { ...withEvent(context, ev), lastInput: { kind: 'restartTriggered', failure: event.type === 'restart' && !!event.failure } as RestartInput };
    }),
    reviveDead: assign(({ context, event }) => {
      if (event.type !== 'restartAll') return {};
      const ev = taskEvent('Restart Signaled', event.time, { details: event.reason ? { restart_reason: event.reason } : {} });
      const c = withEvent(context, ev);
      const { finishedAt: _f, ...rest } = c.state!;
      // A kill of the last life is over: the revived run must not inherit it.
      return {
        ...c,
        state: { ...rest, state: 'pending' as const, failed: false },
        gateOpen: false,
        // A forced restart does not reset the tracker (Nomad's ForceRestart keeps its count).
        killRequested: false,
        killAfterRestart: false,
      };
    }),
  },
}).createMachine({
  id: 'task',
  context: ({ input }) => ({
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
  }),
  initial: 'boot',
  on: {
    gate: { actions: 'setGate' },
    append: { actions: ['appendGiven', 'report'] },
    settings: { actions: 'applySettings' },
    skipShutdownDelay: { actions: 'markSkipShutdownDelay' },
    finalRun: { actions: assign({ finalRun: true }) },
    // A signal request ended: its caller has the answer; forget the child (an error is no
    // reason for the task to fail).
    'xstate.done.actor.signal.*': { actions: 'forgetChild' },
    'xstate.error.actor.signal.*': { actions: 'forgetChild' },
  },
  states: {
    /**
     * Where a (possibly restored) task resumes: dead stays dead; a saved handle with a recorded
     * exit reports that exit (the host died before the exit reached the task state) and the
     * restart policy decides, so a finished task never runs again; any other saved handle is
     * reattached.
     */
    boot: {
      always: [
        { guard: 'deadAlready', target: 'dead' },
        {
          // The exit is on record and the run is still open (running, or pending in its shutdown
          // delay): the host died before the exit was reported. Otherwise a Terminated already
          // reported it (a restart waits).
          guard: and(['hasExitedHandle', 'runOpen']),
          target: 'exited',
          actions: assign(({ context }) => {
            const result = context.handle!.exited!;
            return {
              ...withEvent(context, exitEvent({ result, time: context.now })),
              handle: undefined,
              lastInput: { kind: 'exit', exitCode: result.exitCode, signal: result.signal, err: result.err } as RestartInput,
            };
          }),
        },
        { guard: 'hasExitedHandle', target: 'pending', actions: assign({ handle: undefined }) },
        { guard: 'hasRestoredHandle', target: 'recovering' },
        {
          // The state says a run is open but no usable handle of it was restored (a damaged
          // store): the restore stopped whatever was left of it, so that run is over. Say so and
          // start once more (Nomad's "Failed Restoring Task", pending, then a run).
          guard: or(['runOpen', ({ context }) => context.lostRun]),
          target: 'pending',
          actions: [
            assign(({ context }) => {
              const c = { ...context, ...withEvent(context, taskEvent('Failed Restoring Task', context.now, { displayMessage: LOST_RUN })) };
              return { ...c, state: { ...c.state, state: 'pending' as const } };
            }),
            'report',
          ],
        },
        { target: 'pending' },
      ],
    },
    /**
     * Reattaching a saved handle. A kill here does not leave the state: the recovery is asked to
     * abort and settles; a reattached task is then killed (`killing`), a lost one is dead.
     */
    recovering: {
      invoke: {
        id: 'effect',
        src: 'recoverTask',
        input: ({ context }) => ({ allocId: context.allocId, taskName: context.taskName, handle: context.handle! }),
        onDone: [
          { guard: { type: 'recoverOkAfterKill', params: ({ event }) => event.output }, target: 'killing', actions: ['takeRecovered', 'report'] },
          {
            guard: 'killRequested',
            target: 'dead',
            actions: [{ type: 'killedAfterLostRun', params: ({ event }) => event.output as Extract<RecoverOutput, { ok: false }> }, 'report'],
          },
          {
            guard: { type: 'recoverOk', params: ({ event }) => event.output },
            target: 'running',
            // takeRecovered leaves the state running (its own or the saved one).
            actions: ['takeRecovered', 'report'],
          },
          // Saved before a start that never got as far as a process: start it now.
          { guard: { type: 'notStarted', params: ({ event }) => event.output }, target: 'pending', actions: assign({ handle: undefined }) },
          {
            // The task could not be reattached: record it and let the restart policy decide.
            target: 'exited',
            actions: assign(({ context, event }) => {
              const out = event.output as Extract<RecoverOutput, { ok: false }>;
              return {
                ...withEvent(context, taskEvent('Failed Restoring Task', out.time, { message: out.error })),
                handle: undefined,
                lastInput: { kind: 'exit', exitCode: -1, signal: 0, err: out.error } as RestartInput,
              };
            }),
          },
        ],
      },
      on: { kill: { guard: ({ context }) => !context.killRequested, actions: ['appendKill', 'markKillRequested', 'report', 'abortEffect'] } },
    },
    pending: {
      always: [
        { guard: and(['gateOpen', ({ context }) => !!context.hooks.prestart]), target: 'prestart' },
        { guard: 'gateOpen', target: 'starting' },
      ],
      on: {
        kill: { target: 'dead', actions: ['killPending', 'report'] },
      },
    },
    /**
     * The prestart hooks (task dir, artifacts): no process exists yet, so a kill ends the task at
     * once (leaving the state aborts the hooks, which undo what they had half written).
     */
    prestart: {
      entry: ['beginPrestart', 'report'],
      invoke: {
        id: 'effect',
        src: 'prestartTask',
        input: ({ context }) => ({ allocId: context.allocId, taskName: context.taskName, attempt: context.attempt, now: context.now }),
        onDone: [
          {
            guard: ({ event }) => event.output.ok,
            target: 'starting',
            actions: [assign(({ context, event }) => appendAll(context, event.output.events)), 'report'],
          },
          {
            target: 'exited',
            actions: assign(({ context, event }) => {
              const out = event.output as Extract<PrestartOutput, { ok: false }>;
              return {
                prestarted: false,
                ...appendAll(context, out.events),
                lastInput: { kind: 'startError', recoverable: out.recoverable, message: out.error } as RestartInput,
              };
            }),
          },
        ],
      },
      on: {
        kill: { target: 'dead', actions: ['killPending', 'report'] },
      },
    },
    starting: {
      entry: ['beginAttempt', 'report'],
      invoke: {
        id: 'effect',
        src: 'startTask',
        input: ({ context }) => ({ allocId: context.allocId, taskName: context.taskName, attempt: context.attempt }),
        onDone: [
          // Killed while starting, and the process exists anyway: kill it like a running task.
          {
            guard: { type: 'startOkAfterKill', params: ({ event }) => event.output },
            target: 'killing',
            actions: [{ type: 'started', params: ({ event }) => event.output }, 'report'],
          },
          { guard: 'killRequested', target: 'dead', actions: [{ type: 'killedBeforeRunning', params: ({ event }) => event.output }, 'report'] },
          {
            guard: { type: 'startOk', params: ({ event }) => event.output },
            target: 'running',
            actions: [{ type: 'started', params: ({ event }) => event.output }, 'report'],
          },
          {
            target: 'exited',
            actions: assign(({ context, event }) => {
              const out = event.output as Extract<StartOutput, { ok: false }>;
              const ev = out.validation
                ? taskEvent('Failed Validation', out.time, { details: { validation_error: out.error } })
                : taskEvent('Driver Failure', out.time, { details: { driver_error: out.error } });
              return {
                ...appendAll(context, [...(out.setupEvents ?? []), ev]),
                lastInput: { kind: 'startError', recoverable: out.recoverable && !out.validation, message: out.error } as RestartInput,
              };
            }),
          },
        ],
      },
      on: {
        // Never leave `starting` on a kill: the process may already exist (it does before the
        // driver's start returns). Abort the start, wait for it to settle, then kill what it left.
        kill: { guard: ({ context }) => !context.killRequested, actions: ['appendKill', 'markKillRequested', 'report', 'abortEffect'] },
      },
    },
    running: {
      invoke: [
        {
          src: 'waitTask',
          input: ({ context }) => ({ allocId: context.allocId, taskName: context.taskName, handle: context.handle! }),
          onDone: {
            target: 'exited',
            actions: assign(({ context, event }) => ({
              ...withEvent(context, exitEvent(event.output)),
              lastInput: {
                kind: 'exit',
                exitCode: event.output.result.exitCode,
                signal: event.output.result.signal,
                err: event.output.result.err,
              } as RestartInput,
            })),
          },
        },
        // The poststart hook: services registered while the task runs, deregistered (the actor
        // stopped) as soon as the task leaves `running`, before its shutdown delay or kill.
        {
          id: 'services',
          src: 'taskServices',
          input: ({ context }) => ({ allocId: context.allocId, taskName: context.taskName, startedAt: context.now }),
        },
      ],
      on: {
        kill: [
          { guard: 'hasShutdownDelay', target: 'shutdownDelay', actions: ['appendKill', 'takeKillSkip', 'enterShutdownDelay', 'report'] },
          { target: 'killing', actions: ['appendKill', 'report'] },
        ],
        signal: { actions: SIGNAL_TASK },
        restart: { target: 'restartKilling', actions: ['restartSignaled', 'report'] },
        restartAll: { target: 'restartKilling', actions: ['restartSignaled', 'report'] },
      },
    },
    /**
     * Waiting out the task's shutdown_delay before the kill (Nomad's handleKill): the process is
     * still watched, so an exit meanwhile ends the task without a signal; a skip (the servers'
     * `noShutdownDelay`, or a destroy) cuts the wait short.
     */
    shutdownDelay: {
      always: { guard: 'skipShutdownDelay', target: 'killing' },
      invoke: {
        src: 'waitTask',
        input: ({ context }) => ({ allocId: context.allocId, taskName: context.taskName, handle: context.handle! }),
        onDone: { target: 'dead', actions: [{ type: 'killedDead', params: ({ event }) => event.output }, 'report'] },
      },
      after: { shutdownDelay: { target: 'killing', actions: assign(({ context }) => ({ now: context.now + context.shutdownDelayMs })) } },
      on: {
        skipShutdownDelay: { target: 'killing', actions: 'markSkipShutdownDelay' },
        kill: { guard: ({ event }) => !!event.skipShutdownDelay, target: 'killing', actions: 'markSkipShutdownDelay' },
        // The process still runs: a signal reaches it (Nomad signals any task with a handle).
        signal: { actions: SIGNAL_TASK },
      },
    },
    killing: {
      // Signalling a task being killed is how a host cuts a long kill_timeout short (SIGKILL).
      on: { signal: { actions: SIGNAL_TASK } },
      invoke: {
        src: 'killTask',
        input: killInput,
        onDone: { target: 'dead', actions: [{ type: 'killedDead', params: ({ event }) => event.output }, 'report'] },
      },
    },
    restartKilling: {
      invoke: {
        src: 'killTask',
        input: killInput,
        onDone: [
          {
            guard: 'killAfterRestart',
            target: 'dead',
            actions: [{ type: 'killedDead', params: ({ event }) => event.output }, 'report'],
          },
          {
            target: 'exited',
            actions: assign(({ context, event }) => ({ ...withEvent(context, exitEvent(event.output)), handle: undefined })),
          },
        ],
      },
      on: {
        kill: { actions: ['markKillAfterRestart', 'appendKill', 'report'] },
      },
    },
    exited: {
      entry: assign(({ context, event }) => {
        // The restart jitter is the runtime's random draw, carried on the effect's output.
        const jitter = (event as { output?: { jitter?: number } }).output?.jitter ?? 0;
        const { decision, next } = decideRestart(
          context.restart,
          context.tracker,
          context.lastInput ?? { kind: 'exit', exitCode: 0, signal: 0 },
          context.now,
          () => jitter,
        );
        return { decision, tracker: next, lastInput: undefined, handle: undefined };
      }),
      always: [
        // Destroying: this run was the last, whatever the restart policy says.
        {
          guard: ({ context }) => context.finalRun && context.decision?.state === 'Restarting',
          target: 'dead',
          actions: [assign(({ context }) => toDead(context, context.now)), 'report'],
        },
        {
          guard: 'restarting',
          target: 'restarting',
          actions: [
            assign(({ context }) => {
              const d = context.decision as Extract<RestartDecision, { state: 'Restarting' }>;
              const ev = taskEvent('Restarting', context.now, { details: details.restart(d.delayMs, d.reason) });
              const c = withEvent(context, ev);
              return { ...c, state: { ...c.state!, state: 'pending' as const } };
            }),
            'report',
          ],
        },
        {
          guard: 'notRestarting',
          target: 'dead',
          actions: [
            assign(({ context }) => {
              const d = context.decision as Extract<RestartDecision, { state: 'Not Restarting' }>;
              const c = {
                ...context,
                ...withEvent(context, taskEvent('Not Restarting', context.now, { details: { restart_reason: d.reason, fails_task: 'true' } })),
              };
              return { ...c, ...toDead(c, context.now) };
            }),
            'report',
          ],
        },
        { target: 'dead', actions: [assign(({ context }) => toDead(context, context.now)), 'report'] },
      ],
    },
    restarting: {
      after: {
        restartDelay: {
          target: 'pending',
          actions: assign(({ context }) => ({ now: context.now + (context.decision && 'delayMs' in context.decision ? context.decision.delayMs : 0) })),
        },
      },
      on: {
        kill: { target: 'dead', actions: ['killPending', 'report'] },
        finalRun: { target: 'dead', actions: [assign(({ context }) => ({ ...toDead(context, context.now), finalRun: true })), 'report'] },
      },
    },
    dead: {
      on: {
        restartAll: { guard: ({ context }) => !context.role.poststop, target: 'pending', actions: ['reviveDead', 'report'] },
        kill: {},
      },
    },
  },
});
