/**
 * What the task chart writes down: each event's details and time, the running event count the
 * alloc republishes from, start and finish times, and the clock the chart carries between events.
 */
import { expect } from 'chai';
import { createActor, fromPromise, sendTo, setup } from 'xstate';
import { taskMachine, type ExitOutput, type RecoverOutput, type StartOutput, type TaskMachineEvent, type TaskMachineInput } from '../../machines/task/index.ts';
import { MissingActorError } from '../../model/errors.ts';
import { flush } from './support/charts.ts';
import { ev, mainRole, pendingState, taskHandle, taskHarness, stopTaskHarnesses } from './support/task-harness.ts';

/** Every report's count equals the events it carries (fewer than ten here, so none dropped). */
function countsAgree(reports: Array<{ state: { events: unknown[] }; eventSeq: number }>) {
  expect(reports.length).to.be.greaterThan(0);
  for (const r of reports) expect(r.eventSeq, JSON.stringify(r.state.events)).to.equal(r.state.events.length);
}

describe('task chart: what it records (stub effects, simulated clock)', () => {
  afterEach(stopTaskHarnesses);

  it('counts every event it appends, one by one and several at once, and reports the count', async () => {
    const h = taskHarness();
    h.start.last().resolve({ ok: true, handle: taskHandle(), time: 10, setupEvents: [ev('Driver', 9)] });
    await flush();
    h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 20 });
    await flush();
    h.clock.increment(1250);
    await flush();
    h.start.last().resolve({ ok: false, time: 30, error: 'no executor', recoverable: true });
    await flush();
    expect(h.events()).to.deep.equal(['Received', 'Task Setup', 'Driver', 'Started', 'Terminated', 'Restarting', 'Task Setup', 'Driver Failure', 'Restarting']);
    countsAgree(h.reports);
    expect(h.ctx().eventSeq).to.equal(9);
  });

  it('continues the count it is given; without one it starts from the events it holds', async () => {
    const given = taskHarness({ eventSeq: 25, gateOpen: false });
    given.send({ type: 'append', event: ev('Task hook message', 1) });
    await flush();
    expect(given.reports.map((r) => r.eventSeq)).to.deep.equal([26]);
    const fresh = taskHarness({ gateOpen: false, initialState: { ...pendingState(), events: [ev('Received'), ev('Task hook message')] } });
    fresh.send({ type: 'append', event: ev('Task hook message', 1) });
    await flush();
    expect(fresh.reports.map((r) => r.eventSeq)).to.deep.equal([3]);
  });

  it('times: the clock follows the latest event, a restart begins after its delay, the first start stays the start', async () => {
    const h = taskHarness({}, { attempts: 3, intervalMs: 60_000, delayMs: 1000, mode: 'fail' });
    // A failed start appends several events at once; the restart is timed from the latest.
    h.start.last().resolve({ ok: false, time: 5, error: 'boom', recoverable: true, setupEvents: [ev('Driver', 4)] });
    await flush();
    expect(h.last('Restarting')!.time).to.equal(5);
    h.clock.increment(1250); // the 1 s delay and at most its 25 % jitter (the stub's jitter is 0)
    await flush();
    expect(h.last('Task Setup')!.time, 'the next attempt begins when the delay is over').to.equal(1005);
    h.start.last().resolve({ ok: true, handle: taskHandle(), time: 1010 });
    await flush();
    expect(h.services.at(-1), 'services see when the run began').to.deep.equal({ allocId: 'a', taskName: 'web', startedAt: 1010 });
    h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 1020 });
    await flush();
    expect(h.last('Restarting')!.time).to.equal(1020);
    h.clock.increment(1000);
    await flush();
    h.start.last().resolve({ ok: true, handle: taskHandle(2), time: 2030 });
    await flush();
    expect(h.state().startedAt, 'a restart keeps the first start').to.equal(1010);
    h.send({ type: 'kill', time: 2040 });
    await flush();
    h.kill.last().resolve({ result: { exitCode: 130, signal: 2 }, time: 2050 });
    await flush();
    expect(h.state()).to.include({ state: 'dead', finishedAt: 2050 });
  });

  it('a kill records why and how long it may take; "noKillingEvent" leaves out the Killing', async () => {
    const h = taskHarness();
    h.start.last().resolve({ ok: true, handle: taskHandle(), time: 1 });
    await flush();
    h.send({ type: 'kill', time: 7, reason: ev('Sibling Task Failed', 0), killReason: 'sibling failed', killingDisplay: 'Sibling failed: killing' });
    await flush();
    const [reason, killing] = h.state().events.slice(-2);
    expect(reason).to.deep.include({ type: 'Sibling Task Failed', time: 7 });
    expect(killing).to.deep.include({ type: 'Killing', time: 7, displayMessage: 'Sibling failed: killing' });
    expect(killing!.details).to.deep.equal({ kill_timeout: '500ms', kill_reason: 'sibling failed' });
    h.kill.last().resolve({ result: { exitCode: 130, signal: 2, err: 'killed' }, time: 9 });
    await flush();
    expect(h.last('Terminated')!.details).to.deep.equal({ exit_code: '130', signal: '2', exit_message: 'killed' });
    expect(h.state()).to.include({ exitCode: 130, signal: 2, finishedAt: 9 });

    const quiet = taskHarness({ gateOpen: false });
    quiet.send({ type: 'kill', time: 3, reason: ev('Killing', 0), noKillingEvent: true });
    await flush();
    expect(quiet.events()).to.deep.equal(['Received', 'Killing', 'Killed']);
    expect(quiet.state().events[1]!.details, 'the reason given, not a Killing of its own').to.deep.equal({});
    // A state that already records a finish gets no second Killing.
    const finished = taskHarness({ gateOpen: false, initialState: { ...pendingState(), finishedAt: 1 } });
    finished.send({ type: 'kill', time: 3 });
    await flush();
    expect(finished.events()).to.deep.equal(['Received', 'Killed']);
    expect(finished.state().finishedAt).to.equal(1);
  });

  it('start errors: Driver Failure restarts; Failed Validation does not, whatever the attempts left', async () => {
    const h = taskHarness();
    h.start.last().resolve({ ok: false, time: 2, error: 'no such binary', recoverable: true });
    await flush();
    expect(h.last('Driver Failure')!.details).to.deep.equal({ driver_error: 'no such binary' });
    expect(h.value()).to.equal('restarting');
    const bad = taskHarness();
    bad.start.last().resolve({ ok: false, time: 2, error: 'command is required', recoverable: true, validation: true });
    await flush();
    expect(bad.last('Failed Validation')!.details).to.deep.equal({ validation_error: 'command is required' });
    expect(bad.value()).to.equal('dead');
    expect(bad.state().failed).to.equal(true);
  });

  it('Task Setup says it builds the task directory, with or without prestart work', async () => {
    const plain = taskHarness();
    expect(plain.last('Task Setup')!.message).to.equal('Building Task Directory');
    const hooked = taskHarness({ hooks: { prestart: true } });
    expect(hooked.value()).to.equal('prestart');
    expect(hooked.last('Task Setup')!.message).to.equal('Building Task Directory');
    hooked.prestart.last().resolve({ ok: true, time: 1, events: [] });
    await flush();
    expect(hooked.value()).to.equal('starting');
    expect(hooked.events().filter((e) => e === 'Task Setup')).to.have.length(1);
  });

  it('prestart work without a prestart effect provided starts the task (the chart’s own hook does nothing)', async () => {
    const h = taskHarness({ hooks: { prestart: true } }, undefined, { defaultPrestart: true });
    await flush();
    expect(h.value()).to.equal('starting');
    expect(h.events()).to.deep.equal(['Received', 'Task Setup']);
    expect(h.start.calls).to.have.length(1);
  });

  it('Restarting says how long and why; a restart signal says why and ends the run with its Terminated', async () => {
    const h = taskHarness({}, { attempts: 2, intervalMs: 60_000, delayMs: 1000, mode: 'fail' });
    h.start.last().resolve({ ok: true, handle: taskHandle(), time: 1 });
    await flush();
    h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 2 });
    await flush();
    expect(h.last('Restarting')!.details).to.deep.equal({ start_delay: String(1000 * 1e6), restart_reason: 'Restart within policy' });
    h.clock.increment(1250);
    await flush();
    h.start.last().resolve({ ok: true, handle: taskHandle(2), time: 1300 });
    await flush();
    h.send({ type: 'restart', time: 1400, reason: 'config changed' });
    await flush();
    expect(h.last('Restart Signaled')!.details).to.deep.equal({ restart_reason: 'config changed' });
    h.kill.last().resolve({ result: { exitCode: 130, signal: 2 }, time: 1410 });
    await flush();
    expect(h.events().slice(-3)).to.deep.equal(['Restart Signaled', 'Terminated', 'Restarting']);
    expect(h.last('Terminated')!.time).to.equal(1410);
  });

  it('a signal is recorded with its signal and answered by a child named for the request', async () => {
    const h = taskHarness();
    h.start.last().resolve({ ok: true, handle: taskHandle(), time: 1 });
    await flush();
    h.send({ type: 'signal', time: 4, signal: 'SIGHUP', requestId: 'r7' });
    await flush();
    expect(h.last('Signaling')).to.deep.include({ time: 4, details: { task_signal: 'SIGHUP' } });
    expect(Object.keys(h.child().getSnapshot().children)).to.include('signal.r7');
    h.signal.last().resolve();
    await flush();
    expect(Object.keys(h.child().getSnapshot().children)).to.not.include('signal.r7');
  });

  it('shutdown delay: its event is at the kill’s time, the wait watches the same handle, the clock moves by the delay', async () => {
    const h = taskHarness({ shutdownDelayMs: 3000 });
    h.start.last().resolve({ ok: true, handle: taskHandle(), time: 10 });
    await flush();
    h.send({ type: 'kill', time: 50 });
    await flush();
    expect(h.value()).to.equal('shutdownDelay');
    expect(h.last('Waiting for shutdown delay')!.time).to.equal(50);
    expect(h.wait.calls.map((c) => c.input)).to.deep.equal([
      { allocId: 'a', taskName: 'web', handle: taskHandle() },
      { allocId: 'a', taskName: 'web', handle: taskHandle() },
    ]);
    h.clock.increment(3000);
    await flush();
    expect(h.value()).to.equal('killing');
    expect(h.ctx().now).to.equal(3050);
    // A kill that appends nothing of its own still dates the wait at the kill.
    const quiet = taskHarness({ shutdownDelayMs: 3000 });
    quiet.start.last().resolve({ ok: true, handle: taskHandle(), time: 10 });
    await flush();
    quiet.send({ type: 'kill', time: 50, noKillingEvent: true });
    await flush();
    expect(quiet.events().at(-1)).to.equal('Waiting for shutdown delay');
    expect(quiet.last('Waiting for shutdown delay')!.time).to.equal(50);
  });
});

describe('task chart: an effect the runtime did not provide', () => {
  const effects = ['startTask', 'waitTask', 'killTask', 'recoverTask', 'signalTask'] as const;
  type Effect = (typeof effects)[number];
  /** Runs the chart with every effect but `missing` settling at once, driven to where `missing` is needed. */
  async function errorFor(missing: Effect): Promise<unknown[]> {
    const errors: unknown[] = [];
    const all = {
      startTask: fromPromise<StartOutput>(async () => ({ ok: true, handle: taskHandle(), time: 1 })),
      waitTask: fromPromise<ExitOutput>(() => new Promise<ExitOutput>(() => undefined)),
      killTask: fromPromise<ExitOutput>(async () => ({ result: { exitCode: 0, signal: 2 }, time: 2 })),
      recoverTask: fromPromise<RecoverOutput>(async () => ({ ok: true, time: 1 })),
      signalTask: fromPromise<void>(async () => undefined),
    };
    const { [missing]: _left, ...provided } = all;
    const task = taskMachine.provide({ actors: provided as never });
    const input: TaskMachineInput = {
      allocId: 'a',
      taskName: 'web',
      role: mainRole,
      restart: { policy: { attempts: 0, intervalMs: 1, delayMs: 1, mode: 'fail' }, onSuccess: true },
      killTimeoutMs: 1,
      killSignal: 'SIGINT',
      initialState: pendingState(),
      gateOpen: true,
      now: 0,
      ...(missing === 'recoverTask' ? { restoredHandle: taskHandle() } : {}),
    };
    const parent = setup({
      types: { events: {} as { type: 'toTask'; event: TaskMachineEvent } },
      actors: { task },
    }).createMachine({
      invoke: { id: 'task', src: 'task', input, onError: { actions: ({ event }) => void errors.push(event.error) } },
      on: { toTask: { actions: sendTo('task', ({ event }) => event.event) } },
    });
    // A signal's error answers its caller, not the chart: read it off the event the task gets.
    const actor = createActor(parent, {
      inspect: (e) => {
        if (e.type === '@xstate.event' && e.event.type.startsWith('xstate.error.actor.signal.')) errors.push((e.event as unknown as { error: unknown }).error);
      },
    }).start();
    await flush();
    if (missing === 'killTask') actor.send({ type: 'toTask', event: { type: 'kill', time: 2 } });
    if (missing === 'signalTask') actor.send({ type: 'toTask', event: { type: 'signal', time: 2, signal: 'SIGHUP', requestId: '1' } });
    await flush();
    actor.stop();
    return errors;
  }

  for (const missing of effects) {
    it(`${missing}: MissingActorError naming it`, async () => {
      const errors = await errorFor(missing);
      const err = errors.find((e) => e instanceof MissingActorError) as MissingActorError | undefined;
      expect(err, `errors: ${errors.map(String).join(', ')}`).to.be.instanceOf(MissingActorError);
      expect(err!.actor).to.equal(missing);
      expect(err!.message).to.include(`task chart: actor "${missing}" was not provided`);
    });
  }
});
