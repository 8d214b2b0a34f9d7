/**
 * The task chart's template hook alone (stub effects, simulated clock): `taskTemplates` runs
 * while the task runs and reports changes; the chart restarts (any `restart` template wins),
 * or sends each distinct signal and runs each script through one `templateEffects` child, or
 * kills the task, failed, when a re-render or a `fail_on_error` script fails.
 */
import { expect } from 'chai';
import { createActor, fromCallback, sendTo, setup, SimulatedClock, type AnyActorRef } from 'xstate';
import type { TaskRole } from '../../machines/policy/task-roles.ts';
import { TEMPLATE_RESTART_REASON, templateActions, type TemplateEffectsOutput } from '../../machines/policy/template-change.ts';
import { taskMachine, type ExitOutput, type StartOutput, type TaskMachineEvent, type TaskMachineInput } from '../../machines/task/index.ts';
import type { TaskHandle } from '../../model/task-handle.ts';
import type { TaskState } from '../../model/types.ts';
import { chartCoverage } from '../support/chart-coverage.ts';
import { flush, stub } from './support/charts.ts';

const role: TaskRole = { name: 'web', leader: false, stage: 'main', sidecar: false, poststop: false };
const handle: TaskHandle = { driver: 'stub', id: 'a/web/1', config: {} as never, startedAt: 0, pid: 101, state: {} };
const pending = (): TaskState => ({ state: 'pending', failed: false, restarts: 0, events: [{ type: 'Received', time: 0, displayMessage: '', details: {} }] });

function harness(withTemplates = true) {
  const start = stub<StartOutput>();
  const wait = stub<ExitOutput>();
  const kill = stub<ExitOutput>();
  const effects = stub<TemplateEffectsOutput>();
  const watch = { started: 0, stopped: 0, send: undefined as undefined | ((e: TaskMachineEvent) => void) };
  const taskTemplates = fromCallback<TaskMachineEvent, { allocId: string; taskName: string; startedAt: number }>(({ sendBack }) => {
    watch.started++;
    watch.send = sendBack;
    return () => void watch.stopped++;
  });
  const input: TaskMachineInput = {
    allocId: 'a',
    taskName: 'web',
    role,
    restart: { policy: { attempts: 2, intervalMs: 60_000, delayMs: 1000, mode: 'fail' }, onSuccess: true },
    killTimeoutMs: 500,
    killSignal: 'SIGINT',
    initialState: pending(),
    gateOpen: true,
    now: 0,
    ...(withTemplates ? { hooks: { templates: true } } : {}),
  };
  const task = taskMachine.provide({
    actors: { startTask: start.logic, waitTask: wait.logic, killTask: kill.logic, taskTemplates, templateEffects: effects.logic },
  });
  const parent = setup({ types: { events: {} as { type: 'task.state' } | { type: 'toTask'; event: TaskMachineEvent } }, actors: { task } }).createMachine({
    invoke: { id: 'task', src: 'task', input },
    on: { toTask: { actions: sendTo('task', ({ event }) => event.event) } },
  });
  const clock = new SimulatedClock();
  const actor = createActor(parent, { clock, inspect: chartCoverage.observe }).start();
  const child = () => actor.getSnapshot().children.task as AnyActorRef;
  const running = async () => {
    start.last().resolve({ ok: true, handle, time: 10 });
    await flush();
  };
  return {
    start,
    kill,
    effects,
    watch,
    clock,
    running,
    value: () => child().getSnapshot().value as string,
    state: () => child().getSnapshot().context.state as TaskState,
  };
}

describe('task chart: the template hook', () => {
  it('only a task with templates is watched while it runs: no idle watch child for the others (~2 KB of heap a running task)', async () => {
    const h = harness(false);
    await h.running();
    expect(h.value()).to.equal('running');
    expect(h.watch.started).to.equal(0);
    const t = harness(true);
    await t.running();
    expect(t.watch.started).to.equal(1);
  });

  it('a restart template among the changes restarts the task ("Restart Signaled", not a failure); the watch stops and starts again', async () => {
    const h = harness();
    await h.running();
    expect(h.watch.started).to.equal(1);
    h.watch.send!({
      type: 'template.changed',
      time: 20,
      requestId: 'r1',
      changes: [{ changeMode: 'signal', changeSignal: 'SIGHUP' }, { changeMode: 'restart' }],
    });
    await flush();
    expect(h.value()).to.equal('restartKilling');
    expect(h.watch.stopped).to.equal(1);
    expect(h.effects.calls).to.have.length(0);
    const ev = h.state().events.find((e) => e.type === 'Restart Signaled')!;
    expect(ev.details.restart_reason).to.equal(TEMPLATE_RESTART_REASON);
    h.kill.last().resolve({ result: { exitCode: 0, signal: 15 }, time: 30 });
    await flush();
    // A triggered restart is no failure: no delay, the task starts again and is watched again.
    expect(h.value()).to.equal('restarting');
    h.clock.increment(0);
    await flush();
    expect(h.value()).to.equal('starting');
    await h.running();
    expect(h.watch.started).to.equal(2);
    expect(h.state().failed).to.equal(false);
  });

  it('signals and scripts: one effect child with each distinct signal, "Signaling" per signal, then the script results', async () => {
    const h = harness();
    await h.running();
    const script = { command: '/bin/reload', args: ['-q'] };
    h.watch.send!({
      type: 'template.changed',
      time: 20,
      requestId: 'r2',
      changes: [
        { changeMode: 'signal', changeSignal: 'SIGHUP' },
        { changeMode: 'signal', changeSignal: 'SIGHUP' },
        { changeMode: 'script', changeScript: script },
        { changeMode: 'noop' },
      ],
    });
    await flush();
    expect(h.value()).to.equal('running');
    expect(h.effects.calls).to.have.length(1);
    expect(h.effects.last().input).to.deep.include({ signals: ['SIGHUP'], scripts: [script] });
    expect(
      h
        .state()
        .events.filter((e) => e.type === 'Signaling')
        .map((e) => [e.displayMessage, e.details.task_signal]),
    ).to.deep.equal([['Template re-rendered', 'SIGHUP']]);
    h.effects.last().resolve({ scripts: [{ script, exitCode: 0, time: 25 }] });
    await flush();
    expect(h.state().events.at(-1)!.displayMessage).to.equal('Template successfully ran script /bin/reload with arguments: [-q]. Exit code: 0');
    // A failing script without fail_on_error only says so.
    h.watch.send!({ type: 'template.changed', time: 40, requestId: 'r3', changes: [{ changeMode: 'script', changeScript: script }] });
    await flush();
    h.effects.last().resolve({ scripts: [{ script, exitCode: 3, time: 45 }] });
    await flush();
    expect(h.value()).to.equal('running');
    expect(h.state().events.at(-1)!.type).to.equal('Task hook failed');
  });

  it('a failing script with fail_on_error kills the task, failed', async () => {
    const h = harness();
    await h.running();
    const script = { command: '/bin/reload', failOnError: true };
    h.watch.send!({ type: 'template.changed', time: 20, requestId: 'r4', changes: [{ changeMode: 'script', changeScript: script }] });
    await flush();
    h.effects.last().resolve({ scripts: [{ script, exitCode: -1, error: 'timed out', time: 25 }] });
    await flush();
    expect(h.value()).to.equal('killing');
    expect(h.state().failed).to.equal(true);
    expect(h.state().events.at(-1)!.displayMessage).to.match(/^Template failed to run script \/bin\/reload with arguments \[\] on change: timed out/);
  });

  it('a re-render that fails kills the task, failed ("Template failed: ...")', async () => {
    const h = harness();
    await h.running();
    h.watch.send!({ type: 'template.failed', time: 20, error: 'Permission denied: variable "x"' });
    await flush();
    expect(h.value()).to.equal('killing');
    expect(h.state().failed).to.equal(true);
    expect(h.state().events.at(-1)!.displayMessage).to.equal('Template failed: Permission denied: variable "x"');
  });

  it('a script result arriving after the task left running is still told (and kills nothing)', async () => {
    const h = harness();
    await h.running();
    const script = { command: '/bin/reload', failOnError: true };
    h.watch.send!({ type: 'template.changed', time: 20, requestId: 'r5', changes: [{ changeMode: 'script', changeScript: script }] });
    await flush();
    h.watch.send!({ type: 'template.changed', time: 21, requestId: 'r6', changes: [{ changeMode: 'restart' }] });
    await flush();
    expect(h.value()).to.equal('restartKilling');
    h.effects.calls[0]!.resolve({ scripts: [{ script, exitCode: 0, time: 25 }] });
    await flush();
    expect(h.value()).to.equal('restartKilling');
    expect(h.state().events.at(-1)!.displayMessage).to.match(/^Template successfully ran script/);
  });

  it("templateActions is Nomad's rule", () => {
    expect(templateActions([{ changeMode: 'noop' }])).to.deep.equal({ restart: false, signals: [], scripts: [] });
    expect(
      templateActions([
        { changeMode: 'signal', changeSignal: 'SIGUSR1' },
        { changeMode: 'signal', changeSignal: 'SIGHUP' },
      ]).signals,
    ).to.deep.equal(['SIGUSR1', 'SIGHUP']);
  });
});
