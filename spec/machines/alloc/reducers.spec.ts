import { expect } from 'chai';
import { allocMachineInput } from '../../../machines/alloc/input.ts';
import * as R from '../../../machines/alloc/reducers.ts';
import type { AllocContext } from '../../../machines/alloc/context.ts';
import type { TaskHandle } from '../../../model/task-handle.ts';
import type { Task, TaskState } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

const SOURCES = { now: 10, maxKillTimeoutMs: 30_000, hasUpdateHooks: false };

function ctx(tasks: Task[], over: Parameters<typeof makeAlloc>[1] = {}, patch: Partial<AllocContext> = {}): AllocContext {
  return { ...R.initialContext(allocMachineInput(makeAlloc(tasks, over), undefined, SOURCES).input), ...patch };
}

const dead = (failed = false): TaskState => ({ state: 'dead', failed, restarts: 0, events: [], startedAt: 1, finishedAt: 2 });
const running = (): TaskState => ({ state: 'running', failed: false, restarts: 0, events: [], startedAt: 1 });

describe('alloc chart reducers (pure, alone)', () => {
  it('initialContext: every task pending with a Received event; a client-terminal alloc keeps its status', () => {
    const c = ctx([mockTask('a'), mockTask('b')]);
    expect(Object.keys(c.taskStates)).to.deep.equal(['a', 'b']);
    expect(c.taskStates.a!.events.map((e) => e.type)).to.deep.equal(['Received']);
    expect(c.eventSeq).to.deep.equal({ a: 1, b: 1 });
    expect(c.arrivedTerminal).to.equal(false);
    const t = ctx([mockTask('a')], { clientStatus: 'complete', clientDescription: 'done' });
    expect(t.arrivedStatus).to.deep.equal({ clientStatus: 'complete', clientDescription: 'done' });
  });

  it('spawnTasks: opens only the prestart gate first, and marks the tasks spawned', () => {
    const c = ctx([mockTask('init', {}, { lifecycle: { hook: 'prestart' } }), mockTask('main')]);
    const gated = { ...c, ...(R.updateGates(c).patch ?? {}) };
    const step = R.spawnTasks(gated);
    expect(step.spawn!.map((i) => [i.taskName, i.gateOpen])).to.deep.equal([
      ['init', true],
      ['main', false],
    ]);
    expect(step.patch).to.deep.equal({ spawned: true });
  });

  it('advanceKills: one phase at a time, the leader first, with the group kill reason', () => {
    const c = ctx(
      [mockTask('side', {}, { lifecycle: { hook: 'prestart', sidecar: true } }), mockTask('lead', {}, { leader: true }), mockTask('other')],
      {},
      { spawned: true },
    );
    const planned = { ...c, ...R.planStopKills(c), killEvent: { type: 'Leader Task Dead' as const } };
    const first = R.advanceKills(planned);
    expect(first.send!.map(([t]) => t)).to.deep.equal(['lead']);
    expect(first.send![0]![1]).to.include({ type: 'kill' });
    expect((first.send![0]![1] as { reason?: { type: string } }).reason?.type).to.equal('Leader Task Dead');
    // Nothing more while the leader lives.
    const mid = { ...planned, ...first.patch };
    expect(R.advanceKills(mid).send).to.deep.equal([]);
    const next = R.advanceKills({ ...mid, taskStates: { ...mid.taskStates, lead: dead() } });
    expect(next.send!.map(([t]) => t)).to.deep.equal(['other']);
  });

  it('updateStoppingGates: once stopping, a gate opening is sent only to poststop tasks', () => {
    const tasks = [mockTask('main'), mockTask('post', {}, { lifecycle: { hook: 'poststop' } })];
    const c = ctx(tasks, {}, { spawned: true, coordinator: 'main' });
    const states = { main: dead(), post: c.taskStates.post! };
    const step = R.updateStoppingGates({ ...c, taskStates: states });
    expect(step.patch).to.deep.equal({ coordinator: 'poststop' });
    // The main gate closes (that is always sent); the poststop one opens.
    expect(step.send).to.deep.equal([
      ['main', { type: 'gate', open: false }],
      ['post', { type: 'gate', open: true }],
    ]);
    // A main task's gate opening (its prestart task done) is sent while running, not once stopping.
    const pre = ctx([mockTask('init', {}, { lifecycle: { hook: 'prestart' } }), mockTask('app')], {}, { spawned: true, coordinator: 'prestart' });
    const initDone = { ...pre, taskStates: { ...pre.taskStates, init: dead() } };
    expect(R.updateGates(initDone).send).to.deep.include(['app', { type: 'gate', open: true }]);
    expect(R.updateStoppingGates(initDone).send).to.not.deep.include(['app', { type: 'gate', open: true }]);
  });

  it('applyTaskChanges: a dropped task is killed with "update missing task"; a changed kill timeout is handed on', () => {
    const tasks = [mockTask('keep', {}, { killTimeoutMs: 1000 }), mockTask('gone')];
    const c = ctx(tasks, {}, { spawned: true, taskStates: { keep: running(), gone: running() } });
    const next = makeAlloc([mockTask('keep', {}, { killTimeoutMs: 2000 })], { id: c.allocId, allocModifyIndex: 2 });
    const step = R.applyTaskChanges(c, { type: 'update', alloc: next, time: 20 });
    expect(step.patch!.removedTasks).to.deep.equal(['gone']);
    const kill = step.send!.find(([t]) => t === 'gone')![1] as { type: string; reason: { type: string } };
    expect(kill.type).to.equal('kill');
    expect(kill.reason).to.deep.include({ type: 'Killed', details: { kill_reason: 'update missing task', fails_task: 'true' } });
    expect(step.send!.find(([t]) => t === 'keep')![1]).to.include({ type: 'settings', killTimeoutMs: 2000 });
  });

  it('applyTaskChanges: a new max_run_duration moves an armed timer, spawns one where none runs, and none outside', () => {
    const c = ctx([mockTask('t')], { jobType: 'batch', createTime: 1000 });
    const withDeadline = makeAlloc([mockTask('t')], { id: c.allocId, jobType: 'batch', createTime: 1000, group: { maxRunDurationMs: 500 } });
    const ev = { type: 'update' as const, alloc: withDeadline, time: 1 };
    expect(R.applyTaskChanges({ ...c, maxRunTimer: 'open' }, ev).timer).to.deep.equal({ spawn: 1500 });
    expect(R.applyTaskChanges({ ...c, maxRunTimer: 'armed', maxRunDeadline: 900 }, ev).timer).to.deep.equal({ arm: 1500 });
    expect(R.applyTaskChanges({ ...c, maxRunTimer: 'closed' }, ev).timer).to.equal(undefined);
  });

  it('flushRestarts: restart-running sends restart to each task; restart-all closes every gate and skips removed tasks', () => {
    const c = ctx([mockTask('a'), mockTask('b')], {}, { spawned: true, removedTasks: ['b'] });
    const step = R.flushRestarts({
      ...c,
      pendingRestarts: [
        { kind: 'running', time: 3 },
        { kind: 'all', time: 4, reason: 'why' },
      ],
    });
    expect(step.send).to.deep.equal([
      ['a', { type: 'restart', time: 3, reason: undefined }],
      ['a', { type: 'gate', open: false }],
      ['a', { type: 'restartAll', time: 4, reason: 'why' }],
    ]);
    expect(step.patch).to.deep.equal({ pendingRestarts: [], coordinator: 'init' });
  });

  it('update steps: the update queue child gets each update, hears when hooks start and end; no flag in the context', () => {
    const c = ctx([mockTask('web')]);
    expect(c).to.not.have.property('updating');
    expect(c).to.not.have.property('queuedUpdate');
    const next = { ...c.alloc, allocModifyIndex: c.alloc.allocModifyIndex + 1 };
    expect(R.queueUpdate(c, { type: 'update', alloc: next, time: 20 })).to.deep.equal({ updates: { type: 'update', alloc: next, time: 20 } });
    // What the queue hands back (released) is applied, never queued again.
    expect(R.queueUpdate(c, { type: 'update', alloc: next, time: 20, released: true })).to.deep.equal({});
    expect(R.applyUpdate(c, { type: 'update', alloc: next, time: 20, released: true })).to.include({ alloc: next, now: 20, version: c.version + 1 });
    expect(R.startUpdateHooks(c)).to.deep.equal({}); // no update hooks registered: nothing runs, nothing waits
    const hooked = { ...c, hasUpdateHooks: true };
    expect(R.startUpdateHooks(hooked)).to.deep.equal({ hooks: 'update', updates: { type: 'hooks.started' } });
    expect(R.updateHooksDone({ ...hooked, now: 42 })).to.deep.equal({ updates: { type: 'hooks.done', time: 42 } });
    expect(R.isStaleUpdate(c, { type: 'update', alloc: { ...c.alloc, allocModifyIndex: c.alloc.allocModifyIndex - 1 }, time: 0, released: true })).to.equal(
      true,
    );
  });

  it('restartOne: a single task restarts at once, no hooks queued', () => {
    const c = ctx([mockTask('a')], {}, { spawned: true });
    expect(R.restartOne(c, { type: 'restartTask', taskName: 'a', time: 5 })).to.deep.equal({
      send: [['a', { type: 'restart', time: 5, reason: undefined, failure: undefined }]],
    });
    expect(R.queueRestart(c, { type: 'restartTask', taskName: 'a', time: 5 })).to.deep.equal({});
  });

  it('keepMaxRun: a stop keeps the timer counting only if the alloc ever armed it, and not after it fired', () => {
    const c = ctx([mockTask('t')], { jobType: 'batch', createTime: 1000, group: { maxRunDurationMs: 500 } });
    expect(R.keepMaxRun({ ...c, maxRunTimer: 'never' })).to.deep.equal({});
    expect(R.keepMaxRun({ ...c, maxRunTimer: 'closed' }).timer).to.deep.equal({ spawn: 1500 });
    expect(R.keepMaxRun({ ...c, maxRunTimer: 'closed', maxRunExceeded: true })).to.deep.equal({});
  });

  it('markSetupFailed: every task dead and failed with the reason; a restored live run is left for its kill', () => {
    const c = ctx([mockTask('a'), mockTask('b')]);
    const handle = { driver: 'mock_driver', id: 'h', config: {} as never, startedAt: 0, state: {} } as TaskHandle;
    const out = R.markSetupFailed({ ...c, restoredHandles: { b: handle } }, 'failed to setup alloc: boom', 7);
    expect(out.taskStates!.a).to.include({ state: 'dead' });
    expect(out.taskStates!.a!.events.at(-1)).to.include({ type: 'Setup Failure', displayMessage: 'failed to setup alloc: boom' });
    expect(out.taskStates!.b!.state).to.equal('pending');
    expect(out.setupError).to.equal('failed to setup alloc: boom');
  });
});

describe('allocMachineInput (the runner constructor decisions, pure)', () => {
  const handle = (task: Task): TaskHandle =>
    ({ driver: 'mock_driver', id: `x/${task.name}`, config: { task } as never, startedAt: 0, state: {} }) as TaskHandle;

  it('a new alloc with a previous alloc waits; server task states are never taken', () => {
    const a = makeAlloc([mockTask('t')], { previousAllocation: 'p', taskStates: { t: running() } });
    const { input, pastWait } = allocMachineInput(a, undefined, { ...SOURCES, previousRunner: true, rpc: true });
    expect(input.hasWatched).to.equal(true);
    expect(pastWait).to.equal(false);
    expect(input.alloc.taskStates).to.equal(undefined);
    expect(input.watchSources).to.deep.equal({ previousRunner: true, rpc: true });
  });

  it('a restored alloc whose tasks started is past its wait; an orphaned handle becomes a removed task', () => {
    const kept = mockTask('t');
    const orphan = mockTask('old');
    const a = makeAlloc([kept], { previousAllocation: 'p', taskStates: { t: running() } });
    const { input, group, pastWait } = allocMachineInput(a, { restoredHandles: { t: handle(kept), old: handle(orphan) } }, SOURCES);
    expect(pastWait).to.equal(true);
    expect(input.hasWatched).to.equal(false);
    expect(group.tasks.map((t) => t.name)).to.deep.equal(['t', 'old']);
    expect(input.removedTasks).to.deep.equal(['old']);
    expect(input.roles.map((r) => r.name)).to.deep.equal(['t', 'old']);
  });

  it('a restored alloc that never started a task waits again (it could start beside its victims)', () => {
    const a = makeAlloc([mockTask('t')], { preemptedAllocations: ['v'] });
    const { input, pastWait } = allocMachineInput(a, { restoredHandles: {} }, { ...SOURCES, preemptedRunners: { v: false } });
    expect(pastWait).to.equal(false);
    expect(input.hasWatched).to.equal(true);
    expect(input.watchSources).to.deep.equal({ preemptedRunners: { v: null } });
  });
});
