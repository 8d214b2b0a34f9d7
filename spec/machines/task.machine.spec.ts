import { expect } from 'chai';
import { createActor, sendTo, setup, SimulatedClock, type AnyActorRef } from 'xstate';
import { RESTART_JITTER } from '../../machines/policy/restarts.ts';
import type { TaskRole } from '../../machines/policy/task-roles.ts';
import { taskMachine, type ExitOutput, type RecoverOutput, type StartOutput, type TaskMachineEvent, type TaskMachineInput } from '../../machines/task/index.ts';
import { MissingActorError } from '../../model/errors.ts';
import type { TaskHandle } from '../../model/task-handle.ts';
import type { RestartPolicy, TaskState } from '../../model/types.ts';
import { chartCoverage, coverageRan } from '../support/chart-coverage.ts';
import { flush, stub } from './support/charts.ts';

const role: TaskRole = { name: 'web', leader: false, stage: 'main', sidecar: false, poststop: false };
const handle = (n = 1): TaskHandle => ({ driver: 'stub', id: `a/web/${n}`, config: {} as never, startedAt: 0, pid: 100 + n, state: {} });
const pending = (): TaskState => ({ state: 'pending', failed: false, restarts: 0, events: [{ type: 'Received', time: 0, displayMessage: '', details: {} }] });

/** The task chart alone, with stub effects, under a parent that records its reports. */
function harness(over: Partial<TaskMachineInput> = {}, policy: RestartPolicy = { attempts: 2, intervalMs: 60_000, delayMs: 1000, mode: 'fail' }) {
  const start = stub<StartOutput>();
  const wait = stub<ExitOutput>();
  const kill = stub<ExitOutput>();
  const recover = stub<RecoverOutput>();
  const signal = stub<void>();
  const reports: TaskState[] = [];
  const input: TaskMachineInput = {
    allocId: 'a',
    taskName: 'web',
    role,
    restart: { policy, onSuccess: true },
    killTimeoutMs: 500,
    killSignal: 'SIGINT',
    initialState: pending(),
    gateOpen: true,
    now: 0,
    ...over,
  };
  const task = taskMachine.provide({
    actors: { startTask: start.logic, waitTask: wait.logic, killTask: kill.logic, recoverTask: recover.logic, signalTask: signal.logic },
  });
  const parent = setup({
    types: { events: {} as { type: 'task.state'; state: TaskState } | { type: 'toTask'; event: TaskMachineEvent } },
    actors: { task },
  }).createMachine({
    invoke: { id: 'task', src: 'task', input },
    on: {
      'task.state': { actions: ({ event }) => void reports.push(event.state) },
      toTask: { actions: sendTo('task', ({ event }) => event.event) },
    },
  });
  const clock = new SimulatedClock();
  const actor = createActor(parent, { clock, inspect: chartCoverage.observe }).start();
  const child = () => actor.getSnapshot().children.task as AnyActorRef;
  return {
    start,
    wait,
    kill,
    recover,
    signal,
    reports,
    clock,
    actor,
    send: (event: TaskMachineEvent) => actor.send({ type: 'toTask', event }),
    value: () => child().getSnapshot().value as string,
    state: () => child().getSnapshot().context.state as TaskState,
    events: () => (child().getSnapshot().context.state as TaskState).events.map((e) => e.type),
  };
}

describe('task chart (pure, stub actors, simulated clock)', () => {
  before(() => coverageRan.add('task.machine'));

  it('starts, runs, exits, waits the jittered restart delay on the clock, and starts again', async () => {
    const h = harness();
    expect(h.value()).to.equal('starting');
    h.start.last().resolve({ ok: true, handle: handle(), time: 10 });
    await flush();
    expect(h.value()).to.equal('running');
    expect(h.wait.last().input).to.deep.include({ handle: handle() });
    h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 20, jitter: 0.5 });
    await flush();
    expect(h.value()).to.equal('restarting');
    const delay = 1000 + 0.5 * 1000 * RESTART_JITTER; // the runtime's draw, not Math.random
    expect(h.events().slice(-2)).to.deep.equal(['Terminated', 'Restarting']);
    h.clock.increment(delay - 1);
    await flush();
    expect(h.value()).to.equal('restarting');
    h.clock.increment(1);
    await flush();
    expect(h.value()).to.equal('starting');
    expect(h.start.calls).to.have.length(2);
    expect(h.start.last().input).to.deep.include({ attempt: 2 });
  });

  it('a failed start goes through exited; past the attempts it is dead and failed', async () => {
    const h = harness({}, { attempts: 0, intervalMs: 1000, delayMs: 10, mode: 'fail' });
    h.start.last().resolve({ ok: false, time: 5, error: 'no executor', recoverable: true });
    await flush();
    expect(h.value()).to.equal('dead');
    expect(h.state()).to.include({ state: 'dead', failed: true });
    expect(h.events()).to.deep.equal(['Received', 'Task Setup', 'Driver Failure', 'Not Restarting']);
  });

  it('a successful exit that policy does not restart is dead, not failed', async () => {
    const h = harness({ restart: { policy: { attempts: 1, intervalMs: 1000, delayMs: 10, mode: 'fail' }, onSuccess: false } });
    h.start.last().resolve({ ok: true, handle: handle(), time: 1 });
    await flush();
    h.wait.last().resolve({ result: { exitCode: 0, signal: 0 }, time: 2 });
    await flush();
    expect(h.state()).to.include({ state: 'dead', failed: false });
  });

  it('a kill while pending is Killing then Killed, and dead, with both events kept', async () => {
    const h = harness({ gateOpen: false });
    expect(h.value()).to.equal('pending');
    h.send({ type: 'kill', time: 3 });
    await flush();
    expect(h.value()).to.equal('dead');
    expect(h.events()).to.deep.equal(['Received', 'Killing', 'Killed']);
    expect(h.reports.at(-1)!.state).to.equal('dead');
  });

  it('a kill while starting never reports dead before the start settled; a started process is killed first', async () => {
    const h = harness();
    h.send({ type: 'kill', time: 3 });
    await flush();
    expect(h.value()).to.equal('starting');
    expect(h.reports.every((r) => r.state !== 'dead')).to.equal(true);
    h.start.last().resolve({ ok: true, handle: handle(), time: 4 });
    await flush();
    expect(h.value()).to.equal('killing');
    h.kill.last().resolve({ result: { exitCode: 130, signal: 2 }, time: 6 });
    await flush();
    expect(h.value()).to.equal('dead');
    expect(h.events().slice(-3)).to.deep.equal(['Started', 'Terminated', 'Killed']);
  });

  it('a kill while starting whose start left nothing is Killed and dead', async () => {
    const h = harness();
    h.send({ type: 'kill', time: 3 });
    h.start.last().resolve({ ok: false, time: 4, error: 'start aborted', recoverable: false });
    await flush();
    expect(h.value()).to.equal('dead');
    expect(h.events().slice(-2)).to.deep.equal(['Killing', 'Killed']);
  });

  it('a signal still reaches a task waiting out its shutdown delay or being killed (a host cuts a long kill short)', async () => {
    const h = harness({ shutdownDelayMs: 1000 });
    h.start.last().resolve({ ok: true, handle: handle(), time: 1 });
    await flush();
    h.send({ type: 'kill', time: 2 });
    await flush();
    expect(h.value()).to.equal('shutdownDelay');
    h.send({ type: 'signal', time: 3, signal: 'SIGUSR1', requestId: '1' });
    await flush();
    expect(h.signal.calls.map((c) => c.input)).to.deep.equal([{ allocId: 'a', taskName: 'web', handle: handle(), signal: 'SIGUSR1' }]);
    h.signal.last().resolve();
    h.clock.increment(1000);
    await flush();
    expect(h.value()).to.equal('killing');
    h.send({ type: 'signal', time: 1004, signal: 'SIGKILL', requestId: '2' });
    await flush();
    expect(h.signal.last().input).to.include({ signal: 'SIGKILL' });
    h.signal.last().resolve();
    h.kill.last().resolve({ result: { exitCode: 137, signal: 9 }, time: 1005 });
    await flush();
    expect(h.value()).to.equal('dead');
    expect(h.events().filter((e) => e === 'Signaling')).to.have.length(2);
  });

  it('kill while running goes through killing; a kill of a dead task changes nothing', async () => {
    const h = harness();
    h.start.last().resolve({ ok: true, handle: handle(), time: 1 });
    await flush();
    h.send({ type: 'kill', time: 2 });
    await flush();
    expect(h.value()).to.equal('killing');
    expect(h.kill.last().input).to.deep.include({ timeoutMs: 500, signal: 'SIGINT' });
    h.kill.last().resolve({ result: { exitCode: 130, signal: 2 }, time: 3 });
    await flush();
    const before = h.events();
    h.send({ type: 'kill', time: 4 });
    await flush();
    expect(h.value()).to.equal('dead');
    expect(h.events()).to.deep.equal(before);
  });

  it('restart of a running task kills it, then restarts at once; a kill during that ends dead', async () => {
    const h = harness();
    h.start.last().resolve({ ok: true, handle: handle(), time: 1 });
    await flush();
    h.send({ type: 'restart', time: 2, reason: 'asked' });
    await flush();
    expect(h.value()).to.equal('restartKilling');
    h.kill.last().resolve({ result: { exitCode: 130, signal: 2 }, time: 3 });
    await flush();
    expect(h.value()).to.equal('restarting'); // a signaled restart has no delay, but goes through the clock
    h.clock.increment(0);
    await flush();
    expect(h.value()).to.equal('starting');
    h.start.last().resolve({ ok: true, handle: handle(2), time: 4 });
    await flush();
    h.send({ type: 'restartAll', time: 5 });
    await flush();
    h.send({ type: 'kill', time: 6 });
    await flush();
    expect(h.value()).to.equal('restartKilling');
    h.kill.last().resolve({ result: { exitCode: 130, signal: 2 }, time: 7 });
    await flush();
    expect(h.value()).to.equal('dead');
  });

  it('restartAll revives a dead task; a kill during the restart delay is dead at once', async () => {
    const h = harness();
    await flush();
    h.send({ type: 'kill', time: 1 });
    h.start.last().resolve({ ok: false, time: 2, error: 'aborted', recoverable: false });
    await flush();
    expect(h.value()).to.equal('dead');
    h.send({ type: 'gate', open: false });
    h.send({ type: 'restartAll', time: 3 });
    await flush();
    expect(h.value()).to.equal('pending');
    h.send({ type: 'gate', open: true });
    await flush();
    h.start.last().resolve({ ok: true, handle: handle(2), time: 4 });
    await flush();
    h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 5 });
    await flush();
    expect(h.value()).to.equal('restarting');
    h.send({ type: 'kill', time: 6 });
    await flush();
    expect(h.value()).to.equal('dead');
    expect(h.events().slice(-2)).to.deep.equal(['Killing', 'Killed']);
  });

  it("a forced revive (restartAll of a dead task) keeps the restart tracker's count (Nomad's ForceRestart)", async () => {
    const h = harness({}, { attempts: 1, intervalMs: 60_000, delayMs: 0, mode: 'fail' });
    const tracker = () => (h.actor.getSnapshot().children.task as AnyActorRef).getSnapshot().context.tracker as { count: number };
    await flush();
    h.start.last().resolve({ ok: true, handle: handle(1), time: 1 });
    await flush();
    h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 2 });
    await flush();
    expect(h.value()).to.equal('restarting');
    h.clock.increment(1);
    await flush();
    h.start.last().resolve({ ok: true, handle: handle(2), time: 3 });
    await flush();
    h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 4 });
    await flush();
    expect(h.value()).to.equal('dead'); // the second failure exceeds one attempt
    expect(tracker().count).to.equal(2);
    h.send({ type: 'gate', open: false });
    h.send({ type: 'restartAll', time: 5 });
    await flush();
    expect(h.value()).to.equal('pending');
    expect(tracker().count).to.equal(2);
  });

  it('appends given events without changing state', async () => {
    const h = harness({ gateOpen: false });
    h.send({ type: 'append', event: { type: 'Signaling', time: 1, displayMessage: '', details: {} } });
    await flush();
    expect(h.value()).to.equal('pending');
    expect(h.events().at(-1)).to.equal('Signaling');
  });

  describe('restored', () => {
    it('reattaches a saved handle; a failed reattach is Failed Restoring Task and policy decides', async () => {
      const ok = harness({ restoredHandle: handle(), initialState: { ...pending(), state: 'running' } });
      expect(ok.value()).to.equal('recovering');
      ok.recover.last().resolve({ ok: true, time: 1 });
      await flush();
      expect(ok.value()).to.equal('running');
      const bad = harness({ restoredHandle: handle(), initialState: { ...pending(), state: 'running' } });
      bad.recover.last().resolve({ ok: false, time: 1, error: 'gone' });
      await flush();
      expect(bad.value()).to.equal('restarting');
      expect(bad.events().slice(-2)).to.deep.equal(['Failed Restoring Task', 'Restarting']);
    });

    it('a run the state shows open without a handle (a damaged store) is Failed Restoring Task, pending, then started once', async () => {
      const run = { ...pending(), state: 'running' as const, events: [...pending().events, { type: 'Started', time: 0, displayMessage: '', details: {} }] };
      const h = harness({ initialState: run, gateOpen: false });
      await flush();
      expect(h.value()).to.equal('pending');
      expect(h.events().at(-1)).to.equal('Failed Restoring Task');
      expect(h.reports.at(-1)!.state, 'the state no longer claims a run').to.equal('pending');
      h.send({ type: 'gate', open: true });
      await flush();
      expect(h.value()).to.equal('starting');
      expect(h.start.calls).to.have.length(1);
      // A start the state never saw finish, whose process the restore stopped: the same.
      const lost = harness({
        initialState: { ...pending(), events: [...pending().events, { type: 'Task Setup', time: 0, displayMessage: '', details: {} }] },
        lostRun: true,
        gateOpen: false,
      });
      await flush();
      expect(lost.events().at(-1)).to.equal('Failed Restoring Task');
      // A task that never ran (no run open) just waits for its gate, with no such event.
      const fresh = harness({ gateOpen: false });
      await flush();
      expect(fresh.events()).to.deep.equal(['Received']);
    });

    it('a handle saved before its start that never got a process starts the task again', async () => {
      const h = harness({ restoredHandle: { ...handle(), starting: true } });
      h.recover.last().resolve({ ok: false, time: 1, error: 'not started', notStarted: true });
      await flush();
      expect(h.value()).to.equal('starting');
    });

    it('a kill while reattaching waits for it: reattached is killed, lost is dead', async () => {
      const a = harness({ restoredHandle: handle() });
      a.send({ type: 'kill', time: 1 });
      await flush();
      expect(a.value()).to.equal('recovering');
      a.recover.last().resolve({ ok: true, time: 2 });
      await flush();
      expect(a.value()).to.equal('killing');
      const b = harness({ restoredHandle: handle() });
      b.send({ type: 'kill', time: 1 });
      b.recover.last().resolve({ ok: false, time: 2, error: 'gone' });
      await flush();
      expect(b.value()).to.equal('dead');
    });

    it('a saved exit of a run the state still shows running is reported once, and never started again when policy says no', async () => {
      const h = harness({
        initialState: { ...pending(), state: 'running' },
        restoredHandle: { ...handle(), exited: { exitCode: 0, signal: 0 } },
        restart: { policy: { attempts: 0, intervalMs: 1, delayMs: 1, mode: 'fail' }, onSuccess: false },
      });
      await flush();
      expect(h.value()).to.equal('dead');
      expect(h.start.calls).to.have.length(0);
      expect(h.events().filter((e) => e === 'Terminated')).to.have.length(1);
    });

    it('a saved exit the state already moved past (a restart was waiting) is not reported again', async () => {
      const h = harness({ restoredHandle: { ...handle(), exited: { exitCode: 0, signal: 0 } } });
      await flush();
      expect(h.events().filter((e) => e === 'Terminated')).to.have.length(0);
      expect(h.start.calls).to.have.length(1);
    });

    it('a task restored dead stays dead', () => {
      const h = harness({ initialState: { ...pending(), state: 'dead' } });
      expect(h.value()).to.equal('dead');
    });
  });

  it('an effect the runtime did not provide fails with MissingActorError, naming it', async () => {
    const errors: unknown[] = [];
    const parent = setup({ actors: { task: taskMachine } }).createMachine({
      invoke: {
        src: 'task',
        input: {
          allocId: 'a',
          taskName: 'web',
          role,
          restart: { policy: { attempts: 0, intervalMs: 1, delayMs: 1, mode: 'fail' }, onSuccess: true },
          killTimeoutMs: 1,
          killSignal: 'SIGINT',
          initialState: pending(),
          gateOpen: true,
          now: 0,
        },
        onError: { actions: ({ event }) => void errors.push(event.error) },
      },
      on: { '*': {} },
    });
    const actor = createActor(parent).start();
    await flush();
    actor.stop();
    const err = errors.find((e) => e instanceof MissingActorError) as MissingActorError | undefined;
    expect(err, `errors: ${errors.map(String).join(', ')}`).to.be.instanceOf(MissingActorError);
    expect(err!.actor).to.equal('startTask');
    expect(err!.message).to.match(/task chart: actor "startTask" was not provided/);
  });
});
