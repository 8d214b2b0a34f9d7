/**
 * The task chart alone for the chart specs: stub effects (each call settles when the spec says),
 * a simulated clock, and a parent that records every `task.state` report with its event count.
 */
import { createActor, fromCallback, sendTo, setup, SimulatedClock, type AnyActorRef, type PromiseActorLogic } from 'xstate';
import type { TaskRole } from '../../../machines/policy/task-roles.ts';
import {
  taskMachine,
  type ExitOutput,
  type PrestartOutput,
  type RecoverOutput,
  type StartOutput,
  type TaskContext,
  type TaskMachineEvent,
  type TaskMachineInput,
} from '../../../machines/task/index.ts';
import type { TaskHandle } from '../../../model/task-handle.ts';
import type { RestartPolicy, TaskEvent, TaskState } from '../../../model/types.ts';
import { chartCoverage } from '../../support/chart-coverage.ts';
import { stub } from './charts.ts';

/** A main task's role. */
export const mainRole: TaskRole = { name: 'web', leader: false, stage: 'main', sidecar: false, poststop: false };

/** A driver handle, numbered per start. */
export const taskHandle = (n = 1): TaskHandle => ({ driver: 'stub', id: `a/web/${n}`, config: {} as never, startedAt: 0, pid: 100 + n, state: {} });

/** A task event of `type` at `time`, with nothing else. */
export const ev = (type: string, time = 0): TaskEvent => ({ type, time, displayMessage: '', details: {} });

/** A fresh task state: pending, with its Received event. */
export const pendingState = (): TaskState => ({ state: 'pending', failed: false, restarts: 0, events: [ev('Received')] });

const running: Array<{ stop(): void }> = [];

/** `logic`, also noting the name of each `abort` event it receives (the chart's `abortEffect`). */
function notingAborts<O>(logic: PromiseActorLogic<O, any>, name: string, aborts: string[]): PromiseActorLogic<O, any> {
  return {
    ...logic,
    transition: (snapshot, event, scope) => {
      if ((event as { type: string }).type === 'abort') aborts.push(name);
      return logic.transition(snapshot, event, scope);
    },
  };
}

/** Stops every harness started so far (call it in `afterEach`): no chart outlives its test. */
export function stopTaskHarnesses(): void {
  for (const a of running.splice(0)) a.stop();
}

/** One report the chart sent its parent. */
export interface TaskReport {
  state: TaskState;
  eventSeq: number;
}

/**
 * Runs the task chart with stub effects under a recording parent. `prestart` stubs the prestart
 * hook too (give `hooks: { prestart: true }` for the chart to call it) unless `defaultPrestart`
 * keeps the chart's own; `services` records each `taskServices` input, `aborts` each abort the
 * start or the reattach was sent.
 */
export function taskHarness(
  over: Partial<TaskMachineInput> = {},
  policy: RestartPolicy = { attempts: 2, intervalMs: 60_000, delayMs: 1000, mode: 'fail' },
  opts: { defaultPrestart?: boolean } = {},
) {
  const start = stub<StartOutput>();
  const wait = stub<ExitOutput>();
  const kill = stub<ExitOutput>();
  const recover = stub<RecoverOutput>();
  const signal = stub<void>();
  const prestart = stub<PrestartOutput>();
  const reports: TaskReport[] = [];
  const aborts: string[] = [];
  const services: Array<{ allocId: string; taskName: string; startedAt: number }> = [];
  const taskServices = fromCallback<TaskMachineEvent, { allocId: string; taskName: string; startedAt: number }>(({ input }) => void services.push(input));
  const input: TaskMachineInput = {
    allocId: 'a',
    taskName: 'web',
    role: mainRole,
    restart: { policy, onSuccess: true },
    killTimeoutMs: 500,
    killSignal: 'SIGINT',
    initialState: pendingState(),
    gateOpen: true,
    now: 0,
    ...over,
  };
  const task = taskMachine.provide({
    actors: {
      startTask: notingAborts(start.logic, 'startTask', aborts),
      waitTask: wait.logic,
      killTask: kill.logic,
      recoverTask: notingAborts(recover.logic, 'recoverTask', aborts),
      signalTask: signal.logic,
      taskServices,
      ...(opts.defaultPrestart ? {} : { prestartTask: prestart.logic }),
    },
  });
  const parent = setup({
    types: { events: {} as { type: 'task.state'; state: TaskState; eventSeq: number } | { type: 'toTask'; event: TaskMachineEvent } },
    actors: { task },
  }).createMachine({
    invoke: { id: 'task', src: 'task', input },
    on: {
      'task.state': { actions: ({ event }) => void reports.push({ state: event.state, eventSeq: event.eventSeq }) },
      toTask: { actions: sendTo('task', ({ event }) => event.event) },
    },
  });
  const clock = new SimulatedClock();
  const actor = createActor(parent, { clock, inspect: chartCoverage.observe }).start();
  running.push(actor);
  const child = () => actor.getSnapshot().children.task as AnyActorRef;
  const ctx = () => child().getSnapshot().context as TaskContext;
  return {
    start,
    wait,
    kill,
    recover,
    signal,
    prestart,
    services,
    aborts,
    reports,
    clock,
    actor,
    child,
    ctx,
    send: (event: TaskMachineEvent) => actor.send({ type: 'toTask', event }),
    value: () => child().getSnapshot().value as string,
    state: () => ctx().state,
    events: () => ctx().state.events.map((e) => e.type),
    last: (type: string) =>
      ctx()
        .state.events.filter((e) => e.type === type)
        .at(-1),
  };
}
