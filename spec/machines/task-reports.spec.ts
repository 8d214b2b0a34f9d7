/**
 * The task chart tells its alloc every change: whenever it comes to rest, the last `task.state`
 * report is the task state it holds, with its event count. Scenario by scenario, checked after
 * every step. Also: a kill meeting a start or a reattach in flight asks it to abort.
 */
import { expect } from 'chai';
import type { TaskState } from '../../model/types.ts';
import { flush } from './support/charts.ts';
import { ev, pendingState, stopTaskHarnesses, taskHandle, taskHarness } from './support/task-harness.ts';

type Harness = ReturnType<typeof taskHarness>;

/** The alloc has heard of the state the task is in now. */
function reported(h: Harness, step: string) {
  expect(h.reports.at(-1), step).to.deep.equal({ state: h.state(), eventSeq: h.ctx().eventSeq });
}

const running = (): TaskState => ({ ...pendingState(), state: 'running', events: [ev('Received'), ev('Task Setup'), ev('Started')] });

// [scenario, input, steps: [what, act][]]
type Step = [string, (h: Harness) => void];
const scenarios: Array<[string, Parameters<typeof taskHarness>[0], Parameters<typeof taskHarness>[1], Step[]]> = [
  [
    'start, signal, restart, exit within policy, start again, exit as policy ends it, revive',
    {},
    { attempts: 1, intervalMs: 60_000, delayMs: 0, mode: 'fail' },
    [
      ['starting', () => undefined],
      ['started', (h) => h.start.last().resolve({ ok: true, handle: taskHandle(), time: 1 })],
      ['signalled', (h) => h.send({ type: 'signal', time: 2, signal: 'SIGHUP', requestId: 's' })],
      ['restart signalled', (h) => h.send({ type: 'restart', time: 3, reason: 'asked' })],
      ['restart kill done', (h) => h.kill.last().resolve({ result: { exitCode: 0, signal: 15 }, time: 4 })],
      ['the restart begins', (h) => h.clock.increment(0)],
      ['started again', (h) => h.start.last().resolve({ ok: true, handle: taskHandle(2), time: 5 })],
      ['exited', (h) => h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 6 })],
      ['the delay ends', (h) => h.clock.increment(1)],
      ['restarted', (h) => h.start.last().resolve({ ok: true, handle: taskHandle(3), time: 7 })],
      ['exited past the attempts', (h) => h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 8 })],
      ['revived', (h) => (h.send({ type: 'gate', open: false }), h.send({ type: 'restartAll', time: 9 }))],
      ['appended', (h) => h.send({ type: 'append', event: ev('Task hook message', 10) })],
    ],
  ],
  [
    'a successful exit the policy does not restart',
    { restart: { policy: { attempts: 1, intervalMs: 1000, delayMs: 10, mode: 'fail' }, onSuccess: false } },
    undefined,
    [
      ['started', (h) => h.start.last().resolve({ ok: true, handle: taskHandle(), time: 1 })],
      ['exited well', (h) => h.wait.last().resolve({ result: { exitCode: 0, signal: 0 }, time: 2 })],
    ],
  ],
  [
    'kills: while starting, then running with a shutdown delay',
    { shutdownDelayMs: 1000 },
    undefined,
    [
      ['kill while starting', (h) => h.send({ type: 'kill', time: 1 })],
      ['start settles into killing', (h) => h.start.last().resolve({ ok: true, handle: taskHandle(), time: 2 })],
      ['killed', (h) => h.kill.last().resolve({ result: { exitCode: 0, signal: 2 }, time: 3 })],
      ['revived', (h) => h.send({ type: 'restartAll', time: 4 })],
      ['its gate opens', (h) => h.send({ type: 'gate', open: true })],
      ['started', (h) => h.start.last().resolve({ ok: true, handle: taskHandle(2), time: 5 })],
      ['kill meets the delay', (h) => h.send({ type: 'kill', time: 6 })],
      ['the delay ends', (h) => h.clock.increment(1000)],
      ['killed after the delay', (h) => h.kill.last().resolve({ result: { exitCode: 0, signal: 2 }, time: 1007 })],
    ],
  ],
  [
    'a kill during a restart kill, a kill while the restart waits',
    {},
    { attempts: 3, intervalMs: 60_000, delayMs: 5000, mode: 'fail' },
    [
      ['started', (h) => h.start.last().resolve({ ok: true, handle: taskHandle(), time: 1 })],
      ['restart', (h) => h.send({ type: 'restart', time: 2 })],
      ['kill meets it', (h) => h.send({ type: 'kill', time: 3 })],
      ['dead', (h) => h.kill.last().resolve({ result: { exitCode: 0, signal: 2 }, time: 4 })],
      ['revived', (h) => h.send({ type: 'restartAll', time: 5 })],
      ['its gate opens', (h) => h.send({ type: 'gate', open: true })],
      ['started', (h) => h.start.last().resolve({ ok: true, handle: taskHandle(2), time: 6 })],
      ['exited', (h) => h.wait.last().resolve({ result: { exitCode: 1, signal: 0 }, time: 7 })],
      ['kill while the restart waits', (h) => h.send({ type: 'kill', time: 8 })],
    ],
  ],
  [
    'prestart work, then a kill while it runs',
    { hooks: { prestart: true } },
    undefined,
    [
      ['prestart', () => undefined],
      ['kill', (h) => h.send({ type: 'kill', time: 1 })],
    ],
  ],
  [
    'reattach, then a kill meeting it',
    { restoredHandle: taskHandle(), initialState: running() },
    undefined,
    [['kill while reattaching', (h) => h.send({ type: 'kill', time: 1 })]],
  ],
  [
    'a saved exit the state still shows running',
    { restoredHandle: { ...taskHandle(), exited: { exitCode: 1, signal: 0 } }, initialState: running() },
    undefined,
    [['exited', () => undefined]],
  ],
  ['a run open without a handle', { initialState: running(), gateOpen: false }, undefined, [['lost', () => undefined]]],
];

describe('task chart: every change reported to the alloc (stub effects)', () => {
  afterEach(stopTaskHarnesses);

  for (const [what, input, policy, steps] of scenarios) {
    it(what, async () => {
      const h = taskHarness(input, policy);
      for (const [step, act] of steps) {
        act(h);
        await flush();
        reported(h, `${step} (${h.value()})`);
      }
    });
  }

  it('a kill meeting a start or a reattach in flight asks it to abort, once', async () => {
    const start = taskHarness();
    start.send({ type: 'kill', time: 1 });
    start.send({ type: 'kill', time: 2 });
    await flush();
    expect(start.aborts).to.deep.equal(['startTask']);
    const recover = taskHarness({ restoredHandle: taskHandle(), initialState: running() });
    recover.send({ type: 'kill', time: 1 });
    await flush();
    expect(recover.aborts).to.deep.equal(['recoverTask']);
  });

  it('a signal that fails is forgotten and the task runs on', async () => {
    const h = taskHarness();
    h.start.last().resolve({ ok: true, handle: taskHandle(), time: 1 });
    await flush();
    h.send({ type: 'signal', time: 2, signal: 'SIGHUP', requestId: 'x' });
    await flush();
    expect(Object.keys(h.child().getSnapshot().children)).to.include('signal.x');
    h.signal.last().reject(new Error('no such process'));
    await flush();
    expect(Object.keys(h.child().getSnapshot().children)).to.not.include('signal.x');
    expect(h.value()).to.equal('running');
  });
});
