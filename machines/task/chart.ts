/**
 * The task chart: one task of an allocation (Nomad's TaskRunner run loop) as a pure statechart,
 * states and transitions only. What each action does is a pure function in `reducers.ts`; its
 * data is in `context.ts`. Effects (starting the driver, waiting, killing) are actors referenced
 * by name and provided by the runtime (`actors/runner/task-actors.ts`); time arrives on events,
 * so the chart has no clock of its own except the restart delay, which goes through xstate's
 * (injectable) clock.
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
import { missingActor } from '../missing-actor.ts';
import {
  and,
  assign,
  enqueueActions,
  fromCallback,
  fromPromise,
  not,
  or,
  sendParent,
  sendTo,
  setup,
  spawnChild,
  stopChild,
  type PromiseActorLogic,
} from 'xstate';
import { scriptFailed, templateActions, type TemplateEffectsOutput } from '../policy/template-change.ts';
import { runOpen } from '../policy/task-events.ts';
import type {
  ExitOutput,
  KillTaskInput,
  PrestartOutput,
  PrestartTaskInput,
  RecoverOutput,
  SignalTaskInput,
  StartOutput,
  StartTaskInput,
  TaskContext,
  TaskHandleInput,
  TaskMachineEvent,
  TaskMachineInput,
  TaskServicesInput,
  TaskStateReport,
  TemplateEffectsInput,
} from './context.ts';
import * as R from './reducers.ts';

type Ctx = TaskContext;
type Ev = TaskMachineEvent;

/** Assigns what a pure reducer of the context and the event returns. */
const set = (reduce: (c: Ctx, e: Ev) => Partial<Ctx>) => assign<Ctx, Ev, undefined, Ev, never>(({ context, event }) => reduce(context, event));

/** Assigns what a pure reducer of the context and an effect's output returns (the output is the action's params). */
const take = <Out>(reduce: (c: Ctx, out: Out) => Partial<Ctx>) => assign<Ctx, Ev, Out, Ev, never>(({ context }, out) => reduce(context, out));

/** What a `signal` does wherever the task's process may run: record it, report, send it. */
const SIGNAL_TASK = ['appendSignaling', 'report', 'spawnSignal'] as const;

/** What the effects that act on the task's process take. */
const handleInput = ({ context }: { context: Ctx }): TaskHandleInput => ({ allocId: context.allocId, taskName: context.taskName, handle: context.handle! });

/** What a kill of the task's process needs (its `killing` and `restartKilling` states). */
const killInput = ({ context }: { context: Ctx }): KillTaskInput => ({
  ...handleInput({ context }),
  timeoutMs: context.killTimeoutMs,
  signal: context.killSignal,
});

/** A kill while a start or recovery is in flight: the effect is asked to abort, and settles. */
const KILL_IN_FLIGHT = { guard: not('killRequested'), actions: ['appendKill', 'markKillRequested', 'report', 'abortEffect'] } as const;

/** A kill where no process exists: dead at once. */
const KILL_NO_PROCESS = { target: 'dead', actions: ['killPending', 'report'] } as const;

/** An effect's output, as the params of the action or guard that reads it. */
const output = <Out>({ event }: { event: { output: Out } }) => event.output;

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
    startTask: missingActor<PromiseActorLogic<StartOutput, StartTaskInput>>('task', 'startTask'),
    waitTask: missingActor<PromiseActorLogic<ExitOutput, TaskHandleInput>>('task', 'waitTask'),
    killTask: missingActor<PromiseActorLogic<ExitOutput, KillTaskInput>>('task', 'killTask'),
    recoverTask: missingActor<PromiseActorLogic<RecoverOutput, TaskHandleInput>>('task', 'recoverTask'),
    signalTask: missingActor<PromiseActorLogic<void, SignalTaskInput>>('task', 'signalTask'),
    // Hooks default to doing nothing: a chart run without them (specs, the simulator) starts as before.
    prestartTask: fromPromise<PrestartOutput, PrestartTaskInput>(async ({ input }) => ({ ok: true, time: input.now, events: [] })),
    /**
     * While the task runs: registers its services, runs their checks, and may send `restart`
     * (check_restart); stopping it (leaving `running`) deregisters them before any kill.
     */
    taskServices: fromCallback<TaskMachineEvent, TaskServicesInput>(() => undefined),
    /** While the task runs: watches what its templates read; sends `template.changed` / `template.failed`. */
    taskTemplates: fromCallback<TaskMachineEvent, TaskServicesInput>(() => undefined),
    /** Sends a re-render's signals and runs its change scripts in the task; never rejects. */
    templateEffects: missingActor<PromiseActorLogic<TemplateEffectsOutput, TemplateEffectsInput>>('task', 'templateEffects'),
  },
  delays: {
    shutdownDelay: ({ context }) => context.shutdownDelayMs,
    restartDelay: ({ context }) => R.restartDelayMs(context),
  },
  guards: {
    gateOpen: ({ context }) => context.gateOpen,
    hasPrestartWork: ({ context }) => !!context.hooks.prestart,
    deadAlready: ({ context }) => context.state.state === 'dead',
    hasRestoredHandle: ({ context }) => !!context.handle,
    hasExitedHandle: ({ context }) => !!context.handle?.exited,
    /** The latest run started and has not ended (a task in its shutdown delay is `pending` yet runs). */
    runOpen: ({ context }) => runOpen(context.state),
    /** The restore stopped this task's process without a usable handle (see TaskMachineInput.lostRun). */
    lostRun: ({ context }) => context.lostRun,
    notStarted: (_, out: RecoverOutput) => !out.ok && !!out.notStarted,
    recoverOk: (_, out: RecoverOutput) => out.ok,
    prestartOk: (_, out: PrestartOutput) => out.ok,
    startOk: (_, out: StartOutput) => out.ok,
    restarting: ({ context }) => context.decision?.state === 'Restarting',
    notRestarting: ({ context }) => context.decision?.state === 'Not Restarting',
    finalRun: ({ context }) => context.finalRun,
    killAfterRestart: ({ context }) => context.killAfterRestart,
    /** The kill meets a shutdown_delay (waited, or skipped with Nomad's "Skipping" event). */
    hasShutdownDelay: ({ context }) => context.shutdownDelayMs > 0,
    skipShutdownDelay: ({ context }) => context.skipShutdownDelay,
    /** The kill itself asks to skip the shutdown_delay. */
    killSkipsDelay: ({ event }) => event.type === 'kill' && !!event.skipShutdownDelay,
    killRequested: ({ context }) => context.killRequested,
    startOkAfterKill: ({ context }, out: StartOutput) => out.ok && context.killRequested,
    recoverOkAfterKill: ({ context }, out: RecoverOutput) => out.ok && context.killRequested,
    /** Changed templates ask for a restart (which then is all that happens). */
    templateRestart: ({ event }) => event.type === 'template.changed' && templateActions(event.changes).restart,
    /** A change script failed and its `fail_on_error` kills the task. */
    scriptFatal: ({ event }) => {
      const out = (event as { output?: TemplateEffectsOutput }).output;
      return !!out && out.scripts.some((r) => scriptFailed(r) && !!r.script.failOnError);
    },
    /** A poststop task runs once: restartAll does not revive it. */
    revivable: ({ context }) => !context.role.poststop,
  },
  actions: {
    report: sendParent(({ context }): TaskStateReport => ({
      type: 'task.state',
      taskName: context.taskName,
      state: context.state,
      eventSeq: context.eventSeq,
    })),
    setGate: set(R.setGate),
    appendGiven: set(R.appendGiven),
    applySettings: set(R.applySettings),
    markSkipShutdownDelay: set(R.markSkipShutdownDelay),
    markFinalRun: set(R.markFinalRun),
    dropHandle: set(R.dropHandle),
    killPending: set(R.killPending),
    appendKill: set(R.appendKill),
    markKillAfterRestart: set(R.markKillAfterRestart),
    markKillRequested: set(R.markKillRequested),
    takeKillSkip: set(R.takeKillSkip),
    enterShutdownDelay: set(R.enterShutdownDelay),
    shutdownDelayElapsed: set(R.shutdownDelayElapsed),
    appendSignaling: set(R.appendSignaling),
    restartSignaled: set(R.restartSignaled),
    reviveDead: set(R.reviveDead),
    bootExited: set(R.bootExited),
    restoreLost: set(R.restoreLost),
    beginAttempt: set(R.beginAttempt),
    beginPrestart: set(R.beginPrestart),
    deadNow: set(R.deadNow),
    scheduleRestart: set(R.scheduleRestart),
    notRestarting: set(R.notRestarting),
    restartDelayElapsed: set(R.restartDelayElapsed),
    finalRunDead: set(R.finalRunDead),
    takeRecovered: take(R.takeRecovered),
    recoverFailed: take(R.recoverFailed),
    prestartDone: take(R.prestartDone),
    prestartFailed: take(R.prestartFailed),
    started: take(R.started),
    startFailed: take(R.startFailed),
    runExited: take(R.runExited),
    restartKilled: take(R.restartKilled),
    killedDead: take(R.killedDead),
    killedBeforeRunning: take(R.killedBeforeRunning),
    killedAfterLostRun: take(R.killedAfterLostRun),
    decideExit: take(R.decideExit),
    /** A `signalTask` child `signal.<requestId>`: its done or error answers the caller. */
    spawnSignal: spawnChild('signalTask', {
      id: ({ event }) => `signal.${event.type === 'signal' ? event.requestId : ''}`,
      input: ({ context, event }): SignalTaskInput => ({ ...handleInput({ context }), signal: event.type === 'signal' ? event.signal : '' }),
    }),
    templateRestartSignaled: set(R.templateRestartSignaled),
    appendTemplateSignaling: set(R.appendTemplateSignaling),
    appendScriptResult: set(R.appendScriptResult),
    /** The signals and scripts of changed templates, sent and run by one `templateEffects` child. */
    spawnTemplateEffects: spawnChild('templateEffects', {
      id: ({ event }) => `tchange.${event.type === 'template.changed' ? event.requestId : ''}`,
      input: ({ context, event }): TemplateEffectsInput => ({
        ...handleInput({ context }),
        ...(event.type === 'template.changed' ? templateActions(event.changes) : { restart: false, signals: [], scripts: [] }),
      }),
    }),
    appendTemplateFailed: set(R.appendTemplateFailed),
    forgetChild: stopChild(({ event }) => ('actorId' in event && typeof event.actorId === 'string' ? event.actorId : '')),
    /** Tells the in-flight start or recovery (invoked as `effect`) to abort; it still settles. */
    abortEffect: sendTo('effect', { type: 'abort' }),
  },
}).createMachine({
  id: 'task',
  context: ({ input }) => R.initialContext(input),
  initial: 'boot',
  on: {
    gate: { actions: 'setGate' },
    append: { actions: ['appendGiven', 'report'] },
    settings: { actions: 'applySettings' },
    skipShutdownDelay: { actions: 'markSkipShutdownDelay' },
    finalRun: { actions: 'markFinalRun' },
    // A signal request ended: its caller has the answer; forget the child (an error is no
    // reason for the task to fail).
    'xstate.done.actor.signal.*': { actions: 'forgetChild' },
    'xstate.error.actor.signal.*': { actions: 'forgetChild' },
    // A re-render's signals were sent and scripts run: say how the scripts went.
    'xstate.done.actor.tchange.*': { actions: ['appendScriptResult', 'report', 'forgetChild'] },
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
        // The exit is on record and the run is still open (running, or pending in its shutdown
        // delay): the host died before the exit was reported. Otherwise a Terminated already
        // reported it (a restart waits).
        { guard: and(['hasExitedHandle', 'runOpen']), target: 'exited', actions: 'bootExited' },
        { guard: 'hasExitedHandle', target: 'pending', actions: 'dropHandle' },
        { guard: 'hasRestoredHandle', target: 'recovering' },
        // The state says a run is open but no usable handle of it was restored (a damaged
        // store): the restore stopped whatever was left of it, so that run is over. Say so and
        // start once more (Nomad's "Failed Restoring Task", pending, then a run).
        { guard: or(['runOpen', 'lostRun']), target: 'pending', actions: ['restoreLost', 'report'] },
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
        input: handleInput,
        onDone: [
          {
            guard: { type: 'recoverOkAfterKill', params: output },
            target: 'killing',
            actions: [{ type: 'takeRecovered', params: output }, 'report'],
          },
          { guard: 'killRequested', target: 'dead', actions: [{ type: 'killedAfterLostRun', params: output }, 'report'] },
          // takeRecovered leaves the state running (its own or the saved one).
          { guard: { type: 'recoverOk', params: output }, target: 'running', actions: [{ type: 'takeRecovered', params: output }, 'report'] },
          // Saved before a start that never got as far as a process: start it now.
          { guard: { type: 'notStarted', params: output }, target: 'pending', actions: 'dropHandle' },
          // The task could not be reattached: record it and let the restart policy decide.
          { target: 'exited', actions: { type: 'recoverFailed', params: output } },
        ],
      },
      on: { kill: KILL_IN_FLIGHT },
    },
    pending: {
      always: [
        { guard: and(['gateOpen', 'hasPrestartWork']), target: 'prestart' },
        { guard: 'gateOpen', target: 'starting' },
      ],
      on: { kill: KILL_NO_PROCESS },
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
          { guard: { type: 'prestartOk', params: output }, target: 'starting', actions: [{ type: 'prestartDone', params: output }, 'report'] },
          { target: 'exited', actions: { type: 'prestartFailed', params: output } },
        ],
      },
      on: { kill: KILL_NO_PROCESS },
    },
    starting: {
      entry: ['beginAttempt', 'report'],
      invoke: {
        id: 'effect',
        src: 'startTask',
        input: ({ context }) => ({ allocId: context.allocId, taskName: context.taskName, attempt: context.attempt }),
        onDone: [
          // Killed while starting, and the process exists anyway: kill it like a running task.
          { guard: { type: 'startOkAfterKill', params: output }, target: 'killing', actions: [{ type: 'started', params: output }, 'report'] },
          { guard: 'killRequested', target: 'dead', actions: [{ type: 'killedBeforeRunning', params: output }, 'report'] },
          { guard: { type: 'startOk', params: output }, target: 'running', actions: [{ type: 'started', params: output }, 'report'] },
          { target: 'exited', actions: { type: 'startFailed', params: output } },
        ],
      },
      // Never leave `starting` on a kill: the process may already exist (it does before the
      // driver's start returns). Abort the start, wait for it to settle, then kill what it left.
      on: { kill: KILL_IN_FLIGHT },
    },
    running: {
      invoke: [
        { src: 'waitTask', input: handleInput, onDone: { target: 'exited', actions: { type: 'runExited', params: output } } },
        // The poststart hook: services registered while the task runs, deregistered (the actor
        // stopped) as soon as the task leaves `running`, before its shutdown delay or kill.
        {
          id: 'services',
          src: 'taskServices',
          input: ({ context }) => ({ allocId: context.allocId, taskName: context.taskName, startedAt: context.now }),
        },
      ],
      // The template hook's watch, for a task with templates only: re-renders while the task
      // runs, stopped as it leaves `running`.
      entry: enqueueActions(({ context, enqueue }) => {
        if (context.hooks.templates)
          enqueue.spawnChild('taskTemplates', { id: 'templates', input: { allocId: context.allocId, taskName: context.taskName, startedAt: context.now } });
      }),
      exit: stopChild('templates'),
      on: {
        kill: [
          { guard: 'hasShutdownDelay', target: 'shutdownDelay', actions: ['appendKill', 'takeKillSkip', 'enterShutdownDelay', 'report'] },
          { target: 'killing', actions: ['appendKill', 'report'] },
        ],
        signal: { actions: SIGNAL_TASK },
        restart: { target: 'restartKilling', actions: ['restartSignaled', 'report'] },
        restartAll: { target: 'restartKilling', actions: ['restartSignaled', 'report'] },
        'template.changed': [
          { guard: 'templateRestart', target: 'restartKilling', actions: ['templateRestartSignaled', 'report'] },
          { actions: ['appendTemplateSignaling', 'report', 'spawnTemplateEffects'] },
        ],
        // A failing change script with fail_on_error, or a re-render that failed: killed, failed.
        'xstate.done.actor.tchange.*': [
          { guard: 'scriptFatal', target: 'killing', actions: ['appendScriptResult', 'report', 'forgetChild'] },
          { actions: ['appendScriptResult', 'report', 'forgetChild'] },
        ],
        'template.failed': { target: 'killing', actions: ['appendTemplateFailed', 'report'] },
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
        input: handleInput,
        onDone: { target: 'dead', actions: [{ type: 'killedDead', params: output }, 'report'] },
      },
      after: { shutdownDelay: { target: 'killing', actions: 'shutdownDelayElapsed' } },
      on: {
        skipShutdownDelay: { target: 'killing', actions: 'markSkipShutdownDelay' },
        kill: { guard: 'killSkipsDelay', target: 'killing', actions: 'markSkipShutdownDelay' },
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
        onDone: { target: 'dead', actions: [{ type: 'killedDead', params: output }, 'report'] },
      },
    },
    restartKilling: {
      invoke: {
        src: 'killTask',
        input: killInput,
        onDone: [
          { guard: 'killAfterRestart', target: 'dead', actions: [{ type: 'killedDead', params: output }, 'report'] },
          { target: 'exited', actions: { type: 'restartKilled', params: output } },
        ],
      },
      on: { kill: { actions: ['markKillAfterRestart', 'appendKill', 'report'] } },
    },
    exited: {
      // The restart jitter is the runtime's random draw, carried on the effect's output.
      entry: { type: 'decideExit', params: ({ event }) => R.jitterOf(event) },
      always: [
        // Destroying: this run was the last, whatever the restart policy says.
        { guard: and(['finalRun', 'restarting']), target: 'dead', actions: ['deadNow', 'report'] },
        { guard: 'restarting', target: 'restarting', actions: ['scheduleRestart', 'report'] },
        { guard: 'notRestarting', target: 'dead', actions: ['notRestarting', 'report'] },
        { target: 'dead', actions: ['deadNow', 'report'] },
      ],
    },
    restarting: {
      after: { restartDelay: { target: 'pending', actions: 'restartDelayElapsed' } },
      on: {
        kill: KILL_NO_PROCESS,
        finalRun: { target: 'dead', actions: ['finalRunDead', 'report'] },
      },
    },
    dead: {
      on: {
        restartAll: { guard: 'revivable', target: 'pending', actions: ['reviveDead', 'report'] },
        kill: {},
      },
    },
  },
});
