import { expect } from 'chai';
import { chartCoverage } from '../support/chart-coverage.ts';
import { createActor, createMachine, fromPromise, sendTo, SimulatedClock, type AnyActorRef } from 'xstate';
import { taskMachine, type ExitOutput, type StartOutput, type TaskMachineEvent, type TaskMachineInput } from '../../machines/task/index.ts';
import type { TaskHandle } from '../../model/task-handle.ts';
import type { TaskState } from '../../model/types.ts';

/** The task chart on stub effects and a simulated clock: no process, no real time. */
function harness(opts: { shutdownDelayMs: number }) {
  const clock = new SimulatedClock();
  const handle = { driver: 'stub', id: 'a/web/1', startedAt: 0, state: {} } as unknown as TaskHandle;
  let exit!: (o: ExitOutput) => void;
  const exited = new Promise<ExitOutput>((r) => (exit = r));
  const calls: string[] = [];
  const logic = taskMachine.provide({
    actors: {
      startTask: fromPromise<StartOutput>(async () => ({ ok: true, handle, time: clock.now() })),
      waitTask: fromPromise<ExitOutput>(() => exited),
      killTask: fromPromise<ExitOutput>(async () => {
        calls.push(`kill@${clock.now()}`);
        return { result: { exitCode: 0, signal: 2 }, time: clock.now() };
      }),
      recoverTask: fromPromise(async () => ({ ok: true as const, time: 0 })),
    } as never, // stubs ignore their input
  });
  const input: TaskMachineInput = {
    allocId: 'a',
    taskName: 'web',
    role: { name: 'web', leader: false, stage: 'main', sidecar: false, poststop: false },
    restart: { policy: { attempts: 0, intervalMs: 1000, delayMs: 0, mode: 'fail' }, onSuccess: false },
    killTimeoutMs: 5000,
    killSignal: 'SIGINT',
    shutdownDelayMs: opts.shutdownDelayMs,
    initialState: { state: 'pending', failed: false, restarts: 0, events: [] },
    gateOpen: true,
    now: 0,
  };
  // A parent that only receives the task's reports.
  const states: TaskState[] = [];
  const parent = createMachine({
    types: {} as { events: { type: 'task.state'; state: TaskState } | { type: 'fwd'; event: TaskMachineEvent } },
    invoke: { id: 'task', src: logic, input },
    on: {
      'task.state': { actions: ({ event }) => void states.push(event.state) },
      fwd: { actions: sendTo('task', ({ event }) => event.event) },
    },
  });
  const actor = createActor(parent, { inspect: chartCoverage.observe, clock }).start();
  const task = () => actor.getSnapshot().children.task as AnyActorRef;
  const settle = () => new Promise((r) => setImmediate(r));
  return { clock, actor, task, states, calls, exit, settle, send: (e: TaskMachineEvent) => actor.send({ type: 'fwd', event: e }) };
}

describe('task chart: shutdown_delay (stub effects, simulated clock)', () => {
  it('waits exactly the delay, pending, before the kill', async () => {
    const h = harness({ shutdownDelayMs: 5000 });
    await h.settle();
    expect(h.task().getSnapshot().value).to.equal('running');
    h.send({ type: 'kill', time: 0 });
    expect(h.task().getSnapshot().value).to.equal('shutdownDelay');
    expect(h.states.at(-1)!.state).to.equal('pending');
    expect(h.states.at(-1)!.events.map((e) => e.type)).to.deep.equal(['Task Setup', 'Started', 'Killing', 'Waiting for shutdown delay']);
    h.clock.increment(4999);
    await h.settle();
    expect(h.calls).to.deep.equal([]);
    h.clock.increment(1);
    await h.settle();
    expect(h.calls).to.deep.equal(['kill@5000']);
    expect(h.task().getSnapshot().value).to.equal('dead');
    h.actor.stop();
  });

  it('a skip (noShutdownDelay, destroy) ends the wait at once; an exit meanwhile needs no kill', async () => {
    const h = harness({ shutdownDelayMs: 5000 });
    await h.settle();
    h.send({ type: 'kill', time: 0 });
    h.clock.increment(1000);
    h.send({ type: 'skipShutdownDelay' });
    await h.settle();
    expect(h.calls).to.deep.equal(['kill@1000']);
    h.actor.stop();

    const g = harness({ shutdownDelayMs: 5000 });
    await g.settle();
    g.send({ type: 'kill', time: 0 });
    g.exit({ result: { exitCode: 0, signal: 0 }, time: 10 });
    await g.settle();
    expect(g.calls).to.deep.equal([]);
    expect(g.task().getSnapshot().value).to.equal('dead');
    expect(
      g.states
        .at(-1)!
        .events.slice(-2)
        .map((e) => e.type),
    ).to.deep.equal(['Terminated', 'Killed']);
    g.actor.stop();
  });

  it('a kill that asks to skip says "Skipping shutdown delay" and waits nothing; no delay, no event', async () => {
    const h = harness({ shutdownDelayMs: 5000 });
    await h.settle();
    h.send({ type: 'kill', time: 0, skipShutdownDelay: true });
    await h.settle();
    expect(h.calls).to.deep.equal(['kill@0']);
    expect(h.states.at(-1)!.events.map((e) => e.type)).to.include('Skipping shutdown delay');
    h.actor.stop();
    const n = harness({ shutdownDelayMs: 0 });
    await n.settle();
    n.send({ type: 'kill', time: 0 });
    await n.settle();
    expect(n.states.at(-1)!.events.map((e) => e.type)).not.to.include.members(['Waiting for shutdown delay', 'Skipping shutdown delay']);
    n.actor.stop();
  });
});
