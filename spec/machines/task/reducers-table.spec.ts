import { expect } from 'chai';
import type { TaskContext, TaskMachineEvent, TaskMachineInput } from '../../../machines/task/index.ts';
import * as R from '../../../machines/task/reducers.ts';
import { taskMachineInput } from '../../../machines/task/input.ts';
import { newRestartTracker } from '../../../machines/policy/restarts.ts';
import { taskEvent } from '../../../machines/policy/task-events.ts';
import type { TaskHandle } from '../../../model/task-handle.ts';
import type { TaskEvent, TaskState } from '../../../model/types.ts';
import { mainRole } from '../support/task-harness.ts';

/**
 * The task chart's reducers one by one, as a table: each row is an input context, the event (or
 * the effect's output) the chart hands the reducer, and the whole context the chart assigns from
 * what it returns (deep equality, not a part of it).
 */
const RECEIVED = taskEvent('Received', 0);
const handle = (over: Partial<TaskHandle> = {}): TaskHandle => ({
  driver: 'stub',
  id: 'h1',
  config: {} as TaskHandle['config'],
  startedAt: 0,
  state: {},
  ...over,
});

const INPUT: TaskMachineInput = {
  allocId: 'a1',
  taskName: 'web',
  role: mainRole,
  restart: { policy: { attempts: 1, intervalMs: 60_000, delayMs: 1000, mode: 'fail' }, onSuccess: false },
  killTimeoutMs: 5000,
  killSignal: 'SIGTERM',
  initialState: { state: 'pending', failed: false, restarts: 0, events: [RECEIVED] },
  gateOpen: false,
  now: 10,
};

const base = (): TaskContext => R.initialContext(INPUT);
const st = (state: TaskState['state'], events: TaskEvent[], over: Partial<TaskState> = {}): TaskState => ({
  state,
  failed: false,
  restarts: 0,
  events,
  ...over,
});
const kill = (over: Partial<Extract<TaskMachineEvent, { type: 'kill' }>> = {}): TaskMachineEvent => ({ type: 'kill', time: 20, ...over });
const killing = (time = 20, over: Record<string, string> = {}) => taskEvent('Killing', time, { details: { kill_timeout: '5s', ...over } });
const terminated = (time: number, code = 0, signal = 0, msg?: string) =>
  taskEvent('Terminated', time, { details: { exit_code: String(code), signal: String(signal), ...(msg ? { exit_message: msg } : {}) } });
const exited = (time: number, code = 0, signal = 0) => ({ exitCode: code, signal, oomKilled: false });

interface Row {
  /** What the row shows. */
  name: string;
  /** Fields of the input context that differ from a fresh task's. */
  given?: Partial<TaskContext>;
  run: (c: TaskContext) => Partial<TaskContext>;
  /** Fields of the assigned context that differ from the input context. */
  want: Partial<TaskContext>;
}

const ROWS: Record<string, Row[]> = {
  'events anywhere': [
    { name: 'setGate: a gate event sets the gate', run: (c) => R.setGate(c, { type: 'gate', open: true }), want: { gateOpen: true } },
    { name: 'setGate: another event changes nothing', run: (c) => R.setGate(c, { type: 'finalRun' }), want: {} },
    {
      name: 'appendGiven: the event appended, counted, time moved on',
      run: (c) => R.appendGiven(c, { type: 'append', event: taskEvent('Hook', 30) }),
      want: { state: st('pending', [RECEIVED, taskEvent('Hook', 30)]), eventSeq: 2, now: 30 },
    },
    {
      name: 'appendGiven: an older event leaves the time',
      run: (c) => R.appendGiven(c, { type: 'append', event: taskEvent('Hook', 3) }),
      want: { state: st('pending', [RECEIVED, taskEvent('Hook', 3)]), eventSeq: 2 },
    },
    {
      name: 'applySettings: the next kill uses the new ones',
      run: (c) => R.applySettings(c, { type: 'settings', killTimeoutMs: 9, killSignal: 'SIGINT', shutdownDelayMs: 7 }),
      want: { killTimeoutMs: 9, killSignal: 'SIGINT', shutdownDelayMs: 7 },
    },
    { name: 'markSkipShutdownDelay', run: () => R.markSkipShutdownDelay(), want: { skipShutdownDelay: true } },
    { name: 'markFinalRun', run: () => R.markFinalRun(), want: { finalRun: true } },
    { name: 'dropHandle', given: { handle: handle() }, run: () => R.dropHandle(), want: { handle: undefined } },
  ],
  kills: [
    {
      name: 'killPending: reason, Killing, Killed, dead at the kill time',
      run: (c) => R.killPending(c, kill({ reason: taskEvent('Sibling Task Failed', 0), killReason: 'why', killingDisplay: 'shown' })),
      want: {
        state: st(
          'dead',
          [RECEIVED, taskEvent('Sibling Task Failed', 20), { ...killing(20, { kill_reason: 'why' }), displayMessage: 'shown' }, taskEvent('Killed', 20)],
          {
            finishedAt: 20,
          },
        ),
        eventSeq: 4,
        now: 20,
        handle: undefined,
      },
    },
    {
      name: 'killPending: no Killing when the kill says its reason is all, nor after the run ended',
      given: { state: st('pending', [RECEIVED], { finishedAt: 5 }) },
      run: (c) => R.killPending(c, kill({ noKillingEvent: true })),
      want: { state: st('dead', [RECEIVED, taskEvent('Killed', 20)], { finishedAt: 5 }), eventSeq: 2, now: 20, handle: undefined },
    },
    { name: 'killPending: another event changes nothing', run: (c) => R.killPending(c, { type: 'finalRun' }), want: {} },
    {
      name: 'appendKill: Killing only, the state stays',
      given: { state: st('running', [RECEIVED]) },
      run: (c) => R.appendKill(c, kill()),
      want: { state: st('running', [RECEIVED, killing()]), eventSeq: 2, now: 20 },
    },
    {
      name: 'appendKill: a dead task gets no reason',
      given: { state: st('dead', [RECEIVED]) },
      run: (c) => R.appendKill(c, kill({ reason: taskEvent('Sibling Task Failed', 0) })),
      want: { state: st('dead', [RECEIVED, killing()]), eventSeq: 2, now: 20 },
    },
    { name: 'markKillAfterRestart', run: () => R.markKillAfterRestart(), want: { killAfterRestart: true } },
    { name: 'markKillRequested', run: () => R.markKillRequested(), want: { killRequested: true } },
    { name: 'takeKillSkip: the kill asks to skip', run: (c) => R.takeKillSkip(c, kill({ skipShutdownDelay: true })), want: { skipShutdownDelay: true } },
    { name: 'takeKillSkip: a skip already asked stays', given: { skipShutdownDelay: true }, run: (c) => R.takeKillSkip(c, kill()), want: {} },
    {
      name: 'enterShutdownDelay: Waiting for shutdown delay, pending, at the kill time',
      given: { state: st('running', [RECEIVED]), shutdownDelayMs: 3000 },
      run: (c) => R.enterShutdownDelay(c, kill()),
      want: {
        state: st('pending', [
          RECEIVED,
          { type: 'Waiting for shutdown delay', time: 20, displayMessage: 'Waiting for shutdown_delay of 3s before killing the task.', details: {} },
        ]),
        eventSeq: 2,
        now: 20,
      },
    },
    {
      name: 'enterShutdownDelay: a skipped delay says so, at the chart time without a kill',
      given: { state: st('running', [RECEIVED]), shutdownDelayMs: 3000, skipShutdownDelay: true },
      run: (c) => R.enterShutdownDelay(c, { type: 'skipShutdownDelay' }),
      want: {
        state: st('pending', [
          RECEIVED,
          { type: 'Skipping shutdown delay', time: 10, displayMessage: 'Skipping shutdown_delay of 3s before killing the task.', details: {} },
        ]),
        eventSeq: 2,
      },
    },
    { name: 'shutdownDelayElapsed: time moves on by the delay', given: { shutdownDelayMs: 3000 }, run: (c) => R.shutdownDelayElapsed(c), want: { now: 3010 } },
    {
      name: 'killedDead: Terminated, Killed, dead, no handle',
      given: { state: st('running', [RECEIVED]), handle: handle() },
      run: (c) => R.killedDead(c, { result: { exitCode: 0, signal: 15 }, time: 40 }),
      want: {
        state: st('dead', [RECEIVED, terminated(40, 0, 15), taskEvent('Killed', 40)], { finishedAt: 40, exitCode: 0, signal: 15, oomKilled: false }),
        eventSeq: 3,
        now: 40,
        handle: undefined,
      },
    },
    {
      name: 'killedBeforeRunning: the setup events, Killed, dead',
      run: (c) => R.killedBeforeRunning(c, { time: 30, setupEvents: [taskEvent('Downloading Artifacts', 25)] }),
      want: {
        state: st('dead', [RECEIVED, taskEvent('Downloading Artifacts', 25), taskEvent('Killed', 30)], { finishedAt: 30 }),
        eventSeq: 3,
        now: 30,
        handle: undefined,
      },
    },
    {
      name: 'killedAfterLostRun: an open run ends with Terminated (the error) first',
      given: { state: st('running', [RECEIVED, taskEvent('Started', 5)]) },
      run: (c) => R.killedAfterLostRun(c, { time: 30, error: 'gone' }),
      want: {
        state: st('dead', [RECEIVED, taskEvent('Started', 5), terminated(30, -1, 0, 'gone'), taskEvent('Killed', 30)], { finishedAt: 30, ...exited(30, -1) }),
        eventSeq: 3,
        now: 30,
        handle: undefined,
      },
    },
    {
      name: 'killedAfterLostRun: no run open, only Killed',
      run: (c) => R.killedAfterLostRun(c, { time: 30 }),
      want: { state: st('dead', [RECEIVED, taskEvent('Killed', 30)], { finishedAt: 30 }), eventSeq: 2, now: 30, handle: undefined },
    },
  ],
  'signals and restarts': [
    {
      name: 'appendSignaling: Signaling with the signal',
      run: (c) => R.appendSignaling(c, { type: 'signal', time: 20, signal: 'SIGHUP', requestId: 'r' }),
      want: { state: st('pending', [RECEIVED, taskEvent('Signaling', 20, { details: { task_signal: 'SIGHUP' } })]), eventSeq: 2, now: 20 },
    },
    {
      name: 'restartSignaled: a failure restart counts as one for the policy',
      run: (c) => R.restartSignaled(c, { type: 'restart', time: 20, reason: 'check', failure: true }),
      want: {
        state: st('pending', [RECEIVED, taskEvent('Restart Signaled', 20, { details: { restart_reason: 'check' } })]),
        eventSeq: 2,
        now: 20,
        lastInput: { kind: 'restartTriggered', failure: true },
      },
    },
    {
      name: 'restartSignaled: restartAll is never a failure',
      run: (c) => R.restartSignaled(c, { type: 'restartAll', time: 20 }),
      want: {
        state: st('pending', [RECEIVED, taskEvent('Restart Signaled', 20)]),
        eventSeq: 2,
        now: 20,
        lastInput: { kind: 'restartTriggered', failure: false },
      },
    },
    {
      name: 'reviveDead: pending, not failed, no finish, gate closed, the kill forgotten; the tracker kept',
      given: {
        state: st('dead', [RECEIVED], { failed: true, finishedAt: 5 }),
        gateOpen: true,
        killRequested: true,
        killAfterRestart: true,
        tracker: { ...newRestartTracker(0), count: 3 },
      },
      run: (c) => R.reviveDead(c, { type: 'restartAll', time: 20, reason: 'all' }),
      want: {
        state: st('pending', [RECEIVED, taskEvent('Restart Signaled', 20, { details: { restart_reason: 'all' } })]),
        eventSeq: 2,
        now: 20,
        gateOpen: false,
        killRequested: false,
        killAfterRestart: false,
      },
    },
    { name: 'reviveDead: another event changes nothing', run: (c) => R.reviveDead(c, { type: 'restart', time: 20 }), want: {} },
  ],
  restore: [
    {
      name: 'bootExited: the saved exit reported now, for the policy',
      given: { state: st('running', [RECEIVED, taskEvent('Started', 5)]), handle: handle({ exited: { exitCode: 2, signal: 0 } }) },
      run: (c) => R.bootExited(c),
      want: {
        state: st('running', [RECEIVED, taskEvent('Started', 5), terminated(10, 2)], exited(10, 2)),
        eventSeq: 2,
        handle: undefined,
        lastInput: { kind: 'exit', exitCode: 2, signal: 0, err: undefined },
      },
    },
    {
      name: 'restoreLost: Failed Restoring Task, pending',
      given: { state: st('running', [RECEIVED, taskEvent('Started', 5)]) },
      run: (c) => R.restoreLost(c),
      want: {
        state: st('pending', [RECEIVED, taskEvent('Started', 5), taskEvent('Failed Restoring Task', 10, { displayMessage: R.LOST_RUN })]),
        eventSeq: 2,
      },
    },
    {
      name: 'takeRecovered: a running task only takes the completed handle',
      given: { state: st('running', [RECEIVED]), handle: handle() },
      run: (c) => R.takeRecovered(c, { ok: true, time: 30, handle: handle({ pid: 7 }) }),
      want: { handle: handle({ pid: 7 }) },
    },
    {
      name: 'takeRecovered: a task in its shutdown delay (Started reported) goes back to running',
      given: { state: st('pending', [RECEIVED, taskEvent('Task Setup', 1), taskEvent('Started', 2)]), handle: handle() },
      run: (c) => R.takeRecovered(c, { ok: true, time: 30 }),
      want: { state: st('running', [RECEIVED, taskEvent('Task Setup', 1), taskEvent('Started', 2)]) },
    },
    {
      name: 'takeRecovered: a start the last host never reported gets its Started now',
      given: { state: st('pending', [RECEIVED, taskEvent('Task Setup', 1)]), handle: handle() },
      run: (c) => R.takeRecovered(c, { ok: true, time: 30, handle: handle({ pid: 7 }) }),
      want: {
        state: st('running', [RECEIVED, taskEvent('Task Setup', 1), taskEvent('Started', 30)], { startedAt: 30 }),
        eventSeq: 2,
        now: 30,
        handle: handle({ pid: 7 }),
      },
    },
    {
      name: 'recoverFailed: Failed Restoring Task, no handle, a failed exit for the policy',
      given: { handle: handle() },
      run: (c) => R.recoverFailed(c, { ok: false, time: 30, error: 'no such process' }),
      want: {
        state: st('pending', [RECEIVED, taskEvent('Failed Restoring Task', 30, { message: 'no such process' })]),
        eventSeq: 2,
        now: 30,
        handle: undefined,
        lastInput: { kind: 'exit', exitCode: -1, signal: 0, err: 'no such process' },
      },
    },
  ],
  starts: [
    {
      name: 'beginAttempt: a new attempt with its Task Setup',
      run: (c) => R.beginAttempt(c),
      want: { attempt: 1, state: st('pending', [RECEIVED, taskEvent('Task Setup', 10, { message: 'Building Task Directory' })]), eventSeq: 2 },
    },
    {
      name: 'beginAttempt: after prestart began it, nothing but the flag',
      given: { prestarted: true, attempt: 1 },
      run: (c) => R.beginAttempt(c),
      want: { prestarted: false },
    },
    {
      name: 'beginPrestart: a new attempt, marked begun',
      run: (c) => R.beginPrestart(c),
      want: {
        attempt: 1,
        prestarted: true,
        state: st('pending', [RECEIVED, taskEvent('Task Setup', 10, { message: 'Building Task Directory' })]),
        eventSeq: 2,
      },
    },
    {
      name: 'prestartDone: the hooks events',
      run: (c) => R.prestartDone(c, { ok: true, time: 30, events: [taskEvent('Downloading Artifacts', 30)] }),
      want: { state: st('pending', [RECEIVED, taskEvent('Downloading Artifacts', 30)]), eventSeq: 2, now: 30 },
    },
    {
      name: 'prestartFailed: the hooks events, a start error for the policy, the attempt no longer begun',
      given: { prestarted: true },
      run: (c) => R.prestartFailed(c, { ok: false, time: 30, events: [taskEvent('Failed Artifact Download', 30)], error: 'x', recoverable: true }),
      want: {
        prestarted: false,
        state: st('pending', [RECEIVED, taskEvent('Failed Artifact Download', 30)]),
        eventSeq: 2,
        now: 30,
        lastInput: { kind: 'startError', recoverable: true, message: 'x' },
      },
    },
    {
      name: 'started: the setup events, Started, running with its handle',
      run: (c) => R.started(c, { ok: true, time: 30, handle: handle(), setupEvents: [taskEvent('Hook', 25)] }),
      want: { state: st('running', [RECEIVED, taskEvent('Hook', 25), taskEvent('Started', 30)], { startedAt: 30 }), eventSeq: 3, now: 30, handle: handle() },
    },
    {
      name: 'started: a run already started keeps its startedAt',
      given: { state: st('pending', [RECEIVED], { startedAt: 3 }) },
      run: (c) => R.started(c, { ok: true, time: 30, handle: handle() }),
      want: { state: st('running', [RECEIVED, taskEvent('Started', 30)], { startedAt: 3 }), eventSeq: 2, now: 30, handle: handle() },
    },
    {
      name: 'startFailed: Driver Failure, a recoverable start error',
      run: (c) => R.startFailed(c, { ok: false, time: 30, error: 'boom', recoverable: true }),
      want: {
        state: st('pending', [RECEIVED, taskEvent('Driver Failure', 30, { details: { driver_error: 'boom' } })]),
        eventSeq: 2,
        now: 30,
        lastInput: { kind: 'startError', recoverable: true, message: 'boom' },
      },
    },
    {
      name: 'startFailed: Failed Validation is never recoverable',
      run: (c) => R.startFailed(c, { ok: false, time: 30, error: 'bad', recoverable: true, validation: true, setupEvents: [taskEvent('Hook', 25)] }),
      want: {
        state: st('pending', [RECEIVED, taskEvent('Hook', 25), taskEvent('Failed Validation', 30, { details: { validation_error: 'bad' } })]),
        eventSeq: 3,
        now: 30,
        lastInput: { kind: 'startError', recoverable: false, message: 'bad' },
      },
    },
  ],
  exits: [
    {
      name: 'runExited: Terminated, the exit for the policy',
      given: { state: st('running', [RECEIVED]), handle: handle() },
      run: (c) => R.runExited(c, { result: { exitCode: 1, signal: 0, err: 'e' }, time: 30 }),
      want: {
        state: st('running', [RECEIVED, terminated(30, 1, 0, 'e')], exited(30, 1)),
        eventSeq: 2,
        now: 30,
        lastInput: { kind: 'exit', exitCode: 1, signal: 0, err: 'e' },
      },
    },
    {
      name: 'restartKilled: Terminated, no handle (the policy sees the triggered restart)',
      given: { state: st('running', [RECEIVED]), handle: handle(), lastInput: { kind: 'restartTriggered', failure: false } },
      run: (c) => R.restartKilled(c, { result: { exitCode: 0, signal: 15 }, time: 30 }),
      want: { state: st('running', [RECEIVED, terminated(30, 0, 15)], exited(30, 0, 15)), eventSeq: 2, now: 30, handle: undefined },
    },
    {
      name: 'decideExit: a failed exit with attempts left restarts after the jittered delay',
      given: { lastInput: { kind: 'exit', exitCode: 1, signal: 0 }, handle: handle() },
      run: (c) => R.decideExit(c, 0.5),
      want: {
        decision: { state: 'Restarting', delayMs: 1125, reason: 'Restart within policy' },
        tracker: { ...newRestartTracker(10), count: 1 },
        lastInput: undefined,
        handle: undefined,
      },
    },
    {
      name: 'decideExit: no input is a clean exit (not restarted under mode fail)',
      run: (c) => R.decideExit(c, 0),
      want: {
        decision: { state: 'Terminated', reason: 'Restart unnecessary as task terminated successfully' },
        tracker: { ...newRestartTracker(10), count: 1 },
        lastInput: undefined,
        handle: undefined,
      },
    },
    { name: 'deadNow: dead at the chart time', run: (c) => R.deadNow(c), want: { state: st('dead', [RECEIVED], { finishedAt: 10 }), handle: undefined } },
    {
      name: 'scheduleRestart: Restarting with the delay, pending, counted',
      given: { decision: { state: 'Restarting', delayMs: 1000, reason: 'r' } },
      run: (c) => R.scheduleRestart(c),
      want: {
        state: st('pending', [RECEIVED, taskEvent('Restarting', 10, { details: { start_delay: '1000000000', restart_reason: 'r' } })], {
          restarts: 1,
          lastRestart: 10,
        }),
        eventSeq: 2,
      },
    },
    { name: 'scheduleRestart: no Restarting decision changes nothing', run: (c) => R.scheduleRestart(c), want: {} },
    {
      name: 'notRestarting: Not Restarting (fails the task), dead',
      given: { decision: { state: 'Not Restarting', reason: 'Exceeded allowed attempts' } },
      run: (c) => R.notRestarting(c),
      want: {
        state: st('dead', [RECEIVED, taskEvent('Not Restarting', 10, { details: { restart_reason: 'Exceeded allowed attempts', fails_task: 'true' } })], {
          failed: true,
          finishedAt: 10,
        }),
        eventSeq: 2,
        handle: undefined,
      },
    },
    { name: 'notRestarting: another decision changes nothing', given: { decision: { state: 'Killed', delayMs: 0 } }, run: (c) => R.notRestarting(c), want: {} },
    {
      name: 'restartDelayElapsed: time moves on by the delay',
      given: { decision: { state: 'Restarting', delayMs: 1000, reason: 'r' } },
      run: (c) => R.restartDelayElapsed(c),
      want: { now: 1010 },
    },
    { name: 'restartDelayElapsed: no delay, no move', run: (c) => R.restartDelayElapsed(c), want: {} },
    {
      name: 'finalRunDead: dead now, the run the last',
      run: (c) => R.finalRunDead(c),
      want: { state: st('dead', [RECEIVED], { finishedAt: 10 }), handle: undefined, finalRun: true },
    },
  ],
};

describe('task chart reducers: each branch (table-driven)', () => {
  it('initialContext: defaults for the optional input', () => {
    expect(base()).to.deep.equal({
      allocId: 'a1',
      taskName: 'web',
      role: mainRole,
      restart: INPUT.restart,
      tracker: newRestartTracker(10),
      killTimeoutMs: 5000,
      killSignal: 'SIGTERM',
      shutdownDelayMs: 0,
      skipShutdownDelay: false,
      finalRun: false,
      state: INPUT.initialState,
      eventSeq: 1,
      gateOpen: false,
      attempt: 0,
      now: 10,
      killAfterRestart: false,
      killRequested: false,
      hooks: {},
      prestarted: false,
      lostRun: false,
    });
  });

  it('initialContext: the given count, delay, hooks, lost run and restored handle', () => {
    const c = R.initialContext({ ...INPUT, eventSeq: 14, shutdownDelayMs: 5, hooks: { prestart: true }, lostRun: true, restoredHandle: handle() });
    expect(c).to.deep.include({ eventSeq: 14, shutdownDelayMs: 5, hooks: { prestart: true }, lostRun: true, handle: handle() });
  });

  it("taskMachineInput: the settings where the alloc has the task; the count defaults to the state's", () => {
    const { initialState, gateOpen, now, ...settings } = INPUT;
    expect(taskMachineInput(settings, { initialState, gateOpen, now })).to.deep.equal({ ...INPUT, eventSeq: 1 });
    expect(taskMachineInput(settings, { initialState, gateOpen: true, now: 4, eventSeq: 12, restoredHandle: handle() })).to.deep.equal({
      ...INPUT,
      gateOpen: true,
      now: 4,
      eventSeq: 12,
      restoredHandle: handle(),
    });
  });

  it('jitterOf: an effect output jitter, else 0', () => {
    expect(R.jitterOf({ type: 'x', output: { jitter: 0.25 } })).to.equal(0.25);
    expect(R.jitterOf({ type: 'x', output: { ok: true } })).to.equal(0);
    expect(R.jitterOf({ type: 'x', output: null })).to.equal(0);
    expect(R.jitterOf({ type: 'xstate.init' })).to.equal(0);
  });

  for (const [group, rows] of Object.entries(ROWS)) {
    describe(group, () => {
      for (const row of rows) {
        it(row.name, () => {
          const c = { ...base(), ...row.given };
          expect({ ...c, ...row.run(c) }).to.deep.equal({ ...c, ...row.want });
        });
      }
    });
  }
});
