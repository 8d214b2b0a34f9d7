/**
 * The task chart's task-runner hooks alone (stub effects, simulated clock): `prestart` (the
 * artifacts hook) before each start, and `taskServices` (services and checks) while running.
 */
import { expect } from 'chai';
import { createActor, fromCallback, sendTo, setup, SimulatedClock, type AnyActorRef } from 'xstate';
import type { TaskRole } from '../../machines/policy/task-roles.ts';
import { taskEvent } from '../../machines/policy/task-events.ts';
import {
  taskMachine,
  type ExitOutput,
  type PrestartOutput,
  type StartOutput,
  type TaskMachineEvent,
  type TaskMachineInput,
} from '../../machines/task/index.ts';
import type { TaskHandle } from '../../model/task-handle.ts';
import type { RestartPolicy, TaskState } from '../../model/types.ts';
import { chartCoverage } from '../support/chart-coverage.ts';
import { flush, stub } from './support/charts.ts';

const role: TaskRole = { name: 'web', leader: false, stage: 'main', sidecar: false, poststop: false };
const handle: TaskHandle = { driver: 'stub', id: 'a/web/1', config: {} as never, startedAt: 0, pid: 101, state: {} };
const pending = (): TaskState => ({ state: 'pending', failed: false, restarts: 0, events: [{ type: 'Received', time: 0, displayMessage: '', details: {} }] });

function harness(policy: RestartPolicy = { attempts: 2, intervalMs: 60_000, delayMs: 1000, mode: 'fail' }) {
  const prestart = stub<PrestartOutput>();
  const start = stub<StartOutput>();
  const wait = stub<ExitOutput>();
  const kill = stub<ExitOutput>();
  const services = { started: 0, stopped: 0, send: undefined as undefined | ((e: TaskMachineEvent) => void) };
  const taskServices = fromCallback<TaskMachineEvent, { allocId: string; taskName: string; startedAt: number }>(({ sendBack }) => {
    services.started++;
    services.send = sendBack;
    return () => void services.stopped++;
  });
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
    hooks: { prestart: true },
  };
  const task = taskMachine.provide({
    actors: { prestartTask: prestart.logic, startTask: start.logic, waitTask: wait.logic, killTask: kill.logic, taskServices },
  });
  const parent = setup({ types: { events: {} as { type: 'task.state' } | { type: 'toTask'; event: TaskMachineEvent } }, actors: { task } }).createMachine({
    invoke: { id: 'task', src: 'task', input },
    on: { toTask: { actions: sendTo('task', ({ event }) => event.event) } },
  });
  const clock = new SimulatedClock();
  const actor = createActor(parent, { clock, inspect: chartCoverage.observe }).start();
  const child = () => actor.getSnapshot().children.task as AnyActorRef;
  return {
    prestart,
    start,
    wait,
    kill,
    services,
    clock,
    send: (event: TaskMachineEvent) => actor.send({ type: 'toTask', event }),
    value: () => child().getSnapshot().value as string,
    state: () => child().getSnapshot().context.state as TaskState,
    events: () => (child().getSnapshot().context.state as TaskState).events.map((e) => e.type),
  };
}

const downloading = (time: number) => taskEvent('Downloading Artifacts', time);
const failed = (time: number) =>
  taskEvent('Failed Artifact Download', time, { details: { download_error: 'failed to download artifact "x": bad response code: 404' } });

describe('task chart: task-runner hooks', () => {
  it('runs the prestart hook before the start, with one "Task Setup" per attempt', async () => {
    const h = harness();
    expect(h.value()).to.equal('prestart');
    expect(h.prestart.last().input).to.deep.include({ attempt: 1 });
    h.prestart.last().resolve({ ok: true, time: 1, events: [downloading(1)] });
    await flush();
    expect(h.value()).to.equal('starting');
    expect(h.start.last().input).to.deep.include({ attempt: 1 });
    h.start.last().resolve({ ok: true, handle, time: 2 });
    await flush();
    expect(h.events()).to.deep.equal(['Received', 'Task Setup', 'Downloading Artifacts', 'Started']);
  });

  it('a failed prestart is a recoverable start error: the restart policy restarts it, then gives up', async () => {
    const h = harness({ attempts: 1, intervalMs: 60_000, delayMs: 100, mode: 'fail' });
    h.prestart.last().resolve({ ok: false, time: 1, events: [downloading(1), failed(1)], error: 'x', recoverable: true, jitter: 0 });
    await flush();
    expect(h.value()).to.equal('restarting');
    h.clock.increment(100);
    await flush();
    expect(h.value()).to.equal('prestart');
    expect(h.prestart.last().input).to.deep.include({ attempt: 2 });
    h.prestart.last().resolve({ ok: false, time: 2, events: [failed(2)], error: 'x', recoverable: true, jitter: 0 });
    await flush();
    expect(h.value()).to.equal('dead');
    expect(h.state()).to.include({ failed: true });
    expect(h.start.calls).to.have.length(0);
    expect(h.events().filter((e) => e === 'Failed Artifact Download')).to.have.length(2);
  });

  it('a kill during prestart ends the task at once (no process exists) and aborts the hook', async () => {
    const h = harness();
    h.send({ type: 'kill', time: 3 });
    await flush();
    expect(h.value()).to.equal('dead');
    expect(h.prestart.last().signal.aborted).to.equal(true);
    expect(h.events().slice(-2)).to.deep.equal(['Killing', 'Killed']);
  });

  it('runs taskServices while running; its restart is "Restart Signaled" and a failure; leaving running stops it', async () => {
    const h = harness();
    h.prestart.last().resolve({ ok: true, time: 1, events: [] });
    await flush();
    h.start.last().resolve({ ok: true, handle, time: 2 });
    await flush();
    expect(h.services).to.include({ started: 1, stopped: 0 });
    h.services.send!({ type: 'restart', time: 5, reason: 'healthcheck: check "c" unhealthy', failure: true });
    await flush();
    expect(h.value()).to.equal('restartKilling');
    expect(h.services.stopped).to.equal(1); // deregistered before the kill
    const ev = h.state().events.find((e) => e.type === 'Restart Signaled')!;
    expect(ev.displayMessage).to.equal('healthcheck: check "c" unhealthy');
    h.kill.last().resolve({ result: { exitCode: 137, signal: 9 }, time: 6, jitter: 0 });
    await flush();
    expect(h.value()).to.equal('restarting');
    expect(h.state().restarts).to.equal(1);
  });
});
