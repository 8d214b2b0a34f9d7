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
 *   kill (any live state) ──► killing ──► dead ◄───────────────────────────┘ Terminated
 * ```
 * Every change is reported to the parent alloc machine as a `task.state` event.
 * @module
 */
import { assign, sendParent, setup } from 'xstate';
import type { TaskEvent, TaskState } from '../model/types.ts';
import type { ExitResult, TaskHandle } from '../model/driver-types.ts';
import { decideRestart, type RestartDecision, type RestartInput, type RestartSubject, type RestartTrackerState } from './policy/restarts.ts';
import { appendEvent, details, taskEvent } from './policy/task-events.ts';
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
  initialState: TaskState;
  gateOpen: boolean;
  now: number;
  /** A handle saved by an earlier client: reattach to the task instead of starting it. */
  restoredHandle?: TaskHandle;
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
}

/** Result of the `startTask` actor: never rejects, so failures stay plain data. */
export type StartOutput =
  | { ok: true; handle: TaskHandle; time: number; setupEvents?: TaskEvent[] }
  | { ok: false; time: number; error: string; recoverable: boolean; validation?: boolean; setupEvents?: TaskEvent[] };

/** Result of the `recoverTask` actor. */
export type RecoverOutput = { ok: true; time: number } | { ok: false; time: number; error: string };

/** Result of the `waitTask` and `killTask` actors. */
export interface ExitOutput {
  result: ExitResult;
  time: number;
}

/** Events the task machine accepts. */
export type TaskMachineEvent =
  | { type: 'gate'; open: boolean }
  /** Kill the task; `reason` (e.g. "Sibling Task Failed") is appended first when the task is live. */
  | { type: 'kill'; time: number; reason?: TaskEvent; killReason?: string }
  /** Restart a running task ("Restart Signaled" with the given reason). */
  | { type: 'restart'; time: number; reason?: string; failure?: boolean }
  /** Re-run a dead task too (alloc-level restartAll). */
  | { type: 'restartAll'; time: number; reason?: string }
  /** Append an event without changing state (Signaling, hook messages, ...). */
  | { type: 'append'; event: TaskEvent };

type Ctx = TaskContext;

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

function killEvents(c: Ctx, e: { time: number; reason?: TaskEvent; killReason?: string }): TaskEvent[] {
  const evs: TaskEvent[] = [];
  if (c.state.state !== 'dead' && e.reason) evs.push({ ...e.reason, time: e.time });
  if (c.state.finishedAt === undefined) {
    evs.push(taskEvent('Killing', e.time, { details: { ...details.killTimeout(c.killTimeoutMs), ...(e.killReason ? { kill_reason: e.killReason } : {}) } }));
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
    // Placeholders: the runtime provides the real logic with `.provide()`.
    startTask: null as unknown as import('xstate').PromiseActorLogic<StartOutput, { allocId: string; taskName: string; attempt: number }>,
    waitTask: null as unknown as import('xstate').PromiseActorLogic<ExitOutput, { allocId: string; taskName: string; handle: TaskHandle }>,
    killTask: null as unknown as import('xstate').PromiseActorLogic<ExitOutput, { allocId: string; taskName: string; handle: TaskHandle; timeoutMs: number; signal: string }>,
    recoverTask: null as unknown as import('xstate').PromiseActorLogic<RecoverOutput, { allocId: string; taskName: string; handle: TaskHandle }>,
  },
  delays: {
    restartDelay: ({ context }) => (context.decision && 'delayMs' in context.decision ? context.decision.delayMs : 0),
  },
  guards: {
    gateOpen: ({ context }) => context.gateOpen,
    deadAlready: ({ context }) => context.state.state === 'dead',
    hasRestoredHandle: ({ context }) => !!context.handle,
    recoverOk: (_, out: RecoverOutput) => out.ok,
    startOk: (_, out: StartOutput) => out.ok,
    restarting: ({ context }) => context.decision?.state === 'Restarting',
    notRestarting: ({ context }) => context.decision?.state === 'Not Restarting',
    killAfterRestart: ({ context }) => context.killAfterRestart,
  },
  actions: {
    report: sendParent(({ context }) => ({ type: 'task.state', taskName: context.taskName, state: context.state, eventSeq: context.eventSeq }) as never),
    setGate: assign(({ event }) => (event.type === 'gate' ? { gateOpen: event.open } : {})),
    appendGiven: assign(({ context, event }) => (event.type === 'append' ? withEvent(context, event.event) : {})),
    killPending: assign(({ context, event }) => {
      if (event.type !== 'kill') return {};
      const c = { ...context, ...appendAll(context, killEvents(context, event)) };
      return { ...c, ...appendAll(c, [taskEvent('Killed', event.time)]), ...toDead(c, event.time) };
    }),
    appendKill: assign(({ context, event }) => (event.type === 'kill' ? appendAll(context, killEvents(context, event)) : {})),
    markKillAfterRestart: assign({ killAfterRestart: true }),
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
      return { ...c, state: { ...rest, state: 'pending' as const, failed: false }, gateOpen: false, tracker: { count: 0, intervalStart: 0 } };
    }),
  },
}).createMachine({
  id: 'task',
  context: ({ input }) => ({
    allocId: input.allocId,
    taskName: input.taskName,
    role: input.role,
    restart: input.restart,
    tracker: { count: 0, intervalStart: 0 },
    killTimeoutMs: input.killTimeoutMs,
    killSignal: input.killSignal,
    state: input.initialState,
    eventSeq: input.initialState.events.length,
    gateOpen: input.gateOpen,
    attempt: 0,
    now: input.now,
    killAfterRestart: false,
    ...(input.restoredHandle ? { handle: input.restoredHandle } : {}),
  }),
  initial: 'boot',
  on: {
    gate: { actions: 'setGate' },
    append: { actions: ['appendGiven', 'report'] },
  },
  states: {
    /** Where a (possibly restored) task resumes: dead stays dead, a saved handle is reattached. */
    boot: {
      always: [
        { guard: 'deadAlready', target: 'dead' },
        { guard: 'hasRestoredHandle', target: 'recovering' },
        { target: 'pending' },
      ],
    },
    recovering: {
      invoke: {
        src: 'recoverTask',
        input: ({ context }) => ({ allocId: context.allocId, taskName: context.taskName, handle: context.handle! }),
        onDone: [
          { guard: { type: 'recoverOk', params: ({ event }) => event.output }, target: 'running', actions: [assign(({ context }) => ({ state: { ...context.state, state: 'running' as const } })), 'report'] },
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
      on: { kill: { target: 'dead', actions: ['killPending', 'report'] } },
    },
    pending: {
      always: { guard: 'gateOpen', target: 'starting' },
      on: {
        kill: { target: 'dead', actions: ['killPending', 'report'] },
      },
    },
    starting: {
      entry: [
        assign(({ context }) => ({ attempt: context.attempt + 1, ...withEvent(context, taskEvent('Task Setup', context.now, { message: 'Building Task Directory' })) })),
        'report',
      ],
      invoke: {
        src: 'startTask',
        input: ({ context }) => ({ allocId: context.allocId, taskName: context.taskName, attempt: context.attempt }),
        onDone: [
          {
            guard: { type: 'startOk', params: ({ event }) => event.output },
            target: 'running',
            actions: [
              assign(({ context, event }) => {
                const out = event.output as Extract<StartOutput, { ok: true }>;
                const c = { ...context, ...appendAll(context, [...(out.setupEvents ?? []), taskEvent('Started', out.time)]) };
                return { ...c, handle: out.handle, state: { ...c.state, state: 'running' as const, startedAt: c.state.startedAt ?? out.time } };
              }),
              'report',
            ],
          },
          {
            target: 'exited',
            actions: assign(({ context, event }) => {
              const out = event.output as Extract<StartOutput, { ok: false }>;
              const ev = out.validation
                ? taskEvent('Failed Validation', out.time, { details: { validation_error: out.error } })
                : taskEvent('Driver Failure', out.time, { details: { driver_error: out.error } });
              return { ...appendAll(context, [...(out.setupEvents ?? []), ev]), lastInput: { kind: 'startError', recoverable: out.recoverable && !out.validation, message: out.error } as RestartInput };
            }),
          },
        ],
      },
      on: {
        // Leaving `starting` stops the start actor, which aborts its signal: the driver cleans up.
        kill: { target: 'dead', actions: ['killPending', 'report'] },
      },
    },
    running: {
      invoke: {
        src: 'waitTask',
        input: ({ context }) => ({ allocId: context.allocId, taskName: context.taskName, handle: context.handle! }),
        onDone: {
          target: 'exited',
          actions: assign(({ context, event }) => ({
            ...withEvent(context, exitEvent(event.output)),
            lastInput: { kind: 'exit', exitCode: event.output.result.exitCode, signal: event.output.result.signal, err: event.output.result.err } as RestartInput,
          })),
        },
      },
      on: {
        kill: { target: 'killing', actions: ['appendKill', 'report'] },
        restart: { target: 'restartKilling', actions: ['restartSignaled', 'report'] },
        restartAll: { target: 'restartKilling', actions: ['restartSignaled', 'report'] },
      },
    },
    killing: {
      invoke: {
        src: 'killTask',
        input: ({ context }) => ({ allocId: context.allocId, taskName: context.taskName, handle: context.handle!, timeoutMs: context.killTimeoutMs, signal: context.killSignal }),
        onDone: { target: 'dead', actions: [{ type: 'killedDead', params: ({ event }) => event.output }, 'report'] },
      },
    },
    restartKilling: {
      invoke: {
        src: 'killTask',
        input: ({ context }) => ({ allocId: context.allocId, taskName: context.taskName, handle: context.handle!, timeoutMs: context.killTimeoutMs, signal: context.killSignal }),
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
      entry: assign(({ context }) => {
        const { decision, next } = decideRestart(context.restart, context.tracker, context.lastInput ?? { kind: 'exit', exitCode: 0, signal: 0 }, context.now);
        return { decision, tracker: next, lastInput: undefined, handle: undefined };
      }),
      always: [
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
            const c = { ...context, ...withEvent(context, taskEvent('Not Restarting', context.now, { details: { restart_reason: d.reason, fails_task: 'true' } })) };
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
