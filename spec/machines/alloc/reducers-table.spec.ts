import { expect } from 'chai';
import { allocMachineInput } from '../../../machines/alloc/input.ts';
import * as R from '../../../machines/alloc/reducers.ts';
import type { AllocContext, AllocMachineEvent, AllocMachineInput } from '../../../machines/alloc/context.ts';
import { taskSettingsFor } from '../../../machines/policy/task-settings.ts';
import { MAX_RUN_DURATION_REASON } from '../../../machines/policy/max-run-duration.ts';
import { missingTaskEvent } from '../../../machines/policy/task-changes.ts';
import { taskEvent } from '../../../machines/policy/task-events.ts';
import type { TaskHandle } from '../../../model/task-handle.ts';
import type { Allocation, Task, TaskState } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

/**
 * The alloc chart's reducers one by one, each over the cases its branches tell apart: what a
 * reducer returns is exactly what the chart assigns or sends, so each expectation is the whole
 * step (deep equality), not a part of it.
 */
const SOURCES = { now: 10, maxKillTimeoutMs: 30_000, hasUpdateHooks: false };

function ctx(tasks: Task[], over: Parameters<typeof makeAlloc>[1] = {}, patch: Partial<AllocContext> = {}): AllocContext {
  return { ...R.initialContext(allocMachineInput(makeAlloc(tasks, over), undefined, SOURCES).input), ...patch };
}

function input(alloc: Allocation, over: Partial<AllocMachineInput> = {}): AllocMachineInput {
  const { roles, tasks } = taskSettingsFor(alloc);
  return { alloc, roles, tasks, now: 10, hasWatched: false, ...over };
}

const st = (state: TaskState['state'], over: Partial<TaskState> = {}): TaskState => ({ state, failed: false, restarts: 0, events: [], ...over });
const dead = (finishedAt = 2): TaskState => st('dead', { startedAt: 1, finishedAt });
const running = (): TaskState => st('running', { startedAt: 1 });
const handle = (over: Partial<TaskHandle> = {}): TaskHandle =>
  ({ driver: 'mock_driver', id: 'h', config: {} as never, startedAt: 0, state: {}, ...over }) as TaskHandle;

const post = (name: string) => mockTask(name, {}, { lifecycle: { hook: 'poststop' } });
const side = (name: string) => mockTask(name, {}, { lifecycle: { hook: 'prestart', sidecar: true } });
const update = (alloc: Allocation, time = 20): AllocMachineEvent => ({ type: 'update', alloc, time });
const DESTROY: AllocMachineEvent = { type: 'destroy', time: 99 };

describe('alloc chart reducers: each branch (table-driven)', () => {
  describe('initialContext', () => {
    it('a fresh alloc: empty kill plan, timer never armed, nothing restored, defaults for the optional input', () => {
      const a = makeAlloc([mockTask('t')]);
      const c = R.initialContext(input(a));
      expect(c).to.deep.include({
        coordinator: 'init',
        spawned: false,
        killQueue: [],
        killCurrent: [],
        version: 0,
        maxRunTimer: 'never',
        restoring: false,
        destroyRequested: false,
        removedTasks: [],
        maxKillTimeoutMs: 30_000,
        hasUpdateHooks: false,
        groupShutdownDelayMs: 0,
        delaysSkipped: false,
        arrivedTerminal: false,
      });
      expect(c).to.not.have.property('watchSources');
      expect(c).to.not.have.property('restoredHandles');
      expect(c).to.not.have.property('arrivedStatus');
    });

    it('a restored alloc resumes at prestart with its handles, its flags and its watch sources', () => {
      const a = makeAlloc([mockTask('t')], { group: { shutdownDelayMs: 700 } });
      const h = { t: handle() };
      const c = R.initialContext(
        input(a, {
          restoredHandles: h,
          restoring: true,
          destroyRequested: true,
          watchSources: { rpc: true },
          maxKillTimeoutMs: 9000,
          hasUpdateHooks: true,
          removedTasks: ['x'],
        }),
      );
      expect(c).to.deep.include({
        coordinator: 'prestart',
        restoredHandles: h,
        restoring: true,
        destroyRequested: true,
        watchSources: { rpc: true },
        maxKillTimeoutMs: 9000,
        hasUpdateHooks: true,
        removedTasks: ['x'],
        groupShutdownDelayMs: 700,
      });
    });

    it("the group's shutdown_delay is read from the alloc's own group, 0 when it names none", () => {
      const a = makeAlloc([mockTask('t')]);
      const two: Allocation = {
        ...a,
        job: {
          ...a.job,
          taskGroups: [
            { name: 'other', count: 1, tasks: [mockTask('t')], shutdownDelayMs: 111 },
            { ...a.job.taskGroups[0]!, shutdownDelayMs: 222 },
          ],
        },
      };
      expect(R.initialContext(input(two)).groupShutdownDelayMs).to.equal(222);
      const { roles, tasks } = taskSettingsFor(a);
      const orphan: Allocation = { ...a, taskGroup: 'gone' };
      expect(R.initialContext({ alloc: orphan, roles, tasks, now: 0, hasWatched: false }).groupShutdownDelayMs).to.equal(0);
    });

    it('a restored task keeps its saved state and event count; a noShutdownDelay alloc starts with delays skipped', () => {
      const saved = st('running', { startedAt: 1, events: [taskEvent('Started', 1), taskEvent('Started', 2)] });
      const a = makeAlloc([mockTask('t')], { taskStates: { t: saved }, desiredTransition: { noShutdownDelay: true } });
      const c = R.initialContext(input(a));
      expect(c.taskStates.t).to.equal(saved);
      expect(c.eventSeq).to.deep.equal({ t: 2 });
      expect(c.delaysSkipped).to.equal(true);
    });
  });

  it('isDead: an unknown task is not dead (no throw); only state dead counts', () => {
    const c = ctx([mockTask('a')], {}, { taskStates: { a: dead() } });
    expect(R.isDead(c, 'a')).to.equal(true);
    expect(R.isDead(c, 'nope')).to.equal(false);
    expect(R.isDead({ ...c, taskStates: { a: running() } }, 'a')).to.equal(false);
  });

  describe('markSetupFailed / setupFailed / waitTimedOut', () => {
    const reason = 'failed to setup alloc: boom';
    const failure = (time: number) => ({
      type: 'Setup Failure',
      time,
      displayMessage: reason,
      details: { setup_error: reason, fails_task: 'true', kill_reason: 'Failed Restoring Task' },
    });

    it('each task gets the Setup Failure event, dead and failed, its finish time kept if it had one', () => {
      const c = ctx([mockTask('a'), mockTask('b')], {}, { version: 4, eventSeq: { a: 5, b: 1 }, taskStates: { a: st('pending'), b: dead(3) } });
      const out = R.markSetupFailed(c, reason, 7);
      expect(out).to.deep.equal({
        taskStates: {
          a: { state: 'dead', failed: true, restarts: 0, events: [failure(7)], finishedAt: 7 },
          b: { state: 'dead', failed: true, restarts: 0, events: [failure(7)], startedAt: 1, finishedAt: 3 },
        },
        eventSeq: { a: 6, b: 2 },
        setupError: reason,
        version: 5,
        now: 7,
      });
    });

    const liveCases: Array<[string, Partial<AllocContext>, TaskState, boolean]> = [
      ['a restored live handle, not spawned: left for its kill', { restoredHandles: { a: handle() } }, st('running'), true],
      ['spawned already: dead', { spawned: true, restoredHandles: { a: handle() } }, st('running'), false],
      ['its handle says it exited: dead', { restoredHandles: { a: handle({ exited: { exitCode: 0 } } as Partial<TaskHandle>) } }, st('running'), false],
      ['no handle: dead', { restoredHandles: {} }, st('running'), false],
      ['no handles at all: dead', {}, st('running'), false],
      ['already dead: stays dead', { restoredHandles: { a: handle() } }, dead(3), false],
      ['dead with no finish time: stamped now', { restoredHandles: { a: handle() } }, st('dead'), false],
    ];
    for (const [name, patch, s, live] of liveCases)
      it(`a restored run: ${name}`, () => {
        const c = ctx([mockTask('a')], {}, { ...patch, taskStates: { a: s } });
        const out = R.markSetupFailed(c, reason, 7).taskStates!.a!;
        expect(out.state).to.equal(live ? s.state : 'dead');
        expect(out.finishedAt).to.equal(live ? undefined : (s.finishedAt ?? 7));
        expect(out.events.at(-1)).to.deep.equal(failure(7));
      });

    it('setupFailed words the effect error; waitTimedOut names the bound and moves the clock by it', () => {
      const c = ctx([mockTask('a')], {}, { now: 100, prevAllocWaitTimeoutMs: 50 });
      expect(R.setupFailed(c, { error: new Error('disk full') }).setupError).to.equal('failed to setup alloc: disk full');
      const out = R.waitTimedOut(c);
      expect(out.setupError).to.equal('failed to setup alloc: timed out after 50ms waiting for previous allocations to stop');
      expect(out.now).to.equal(150);
      expect(out.taskStates!.a!.finishedAt).to.equal(150);
      expect(R.waitTimedOut({ ...c, prevAllocWaitTimeoutMs: undefined }).now).to.equal(100);
    });
  });

  it('markUnstartedDead: nothing once spawned; else every live task dead at now (a dead one untouched)', () => {
    const was = dead(3);
    const c = ctx(
      [mockTask('a'), mockTask('b'), mockTask('c')],
      {},
      { now: 40, version: 2, taskStates: { a: st('pending'), b: was, c: st('pending', { finishedAt: 9 }) } },
    );
    expect(R.markUnstartedDead({ ...c, spawned: true })).to.deep.equal({});
    const out = R.markUnstartedDead(c);
    expect(out).to.deep.equal({
      taskStates: { a: st('dead', { finishedAt: 40 }), b: was, c: st('dead', { finishedAt: 9 }) },
      version: 3,
    });
    expect(out.taskStates!.b).to.equal(was);
  });

  describe('spawning the tasks', () => {
    const kill = (time: number) => ({ type: 'kill', time, reason: missingTaskEvent(time), noKillingEvent: true });

    it('spawnTasks: each input carries the context eventSeq and the restored handle; restored removed tasks still live are killed', () => {
      const h = handle();
      const c = ctx(
        [mockTask('a'), mockTask('gone'), mockTask('done'), mockTask('fresh')],
        {},
        {
          now: 30,
          eventSeq: { a: 7, gone: 1, done: 1, fresh: 1 },
          restoredHandles: { a: h, gone: h, done: h },
          removedTasks: ['gone', 'done', 'fresh'],
          taskStates: { a: st('running'), gone: st('running'), done: dead(), fresh: st('pending') },
        },
      );
      const step = R.spawnTasks(c);
      expect(step.patch).to.deep.equal({ spawned: true });
      expect(step.send).to.deep.equal([['gone', kill(30)]]);
      const a = step.spawn!.find((i) => i.taskName === 'a')!;
      expect(a.eventSeq).to.equal(7);
      expect(a.restoredHandle).to.equal(h);
      expect(a.initialState).to.equal(c.taskStates.a);
      expect(a.now).to.equal(30);
      expect(step.spawn!.find((i) => i.taskName === 'fresh')).to.not.have.property('restoredHandle');
    });

    it('spawnTasks: an eventSeq the context lacks falls back to the events the state holds', () => {
      const c = ctx([mockTask('a')], {}, { eventSeq: {}, taskStates: { a: st('pending', { events: [taskEvent('Received', 1), taskEvent('x', 2)] }) } });
      expect(R.spawnTasks(c).spawn![0]!.eventSeq).to.equal(2);
    });

    it('spawnRestoredTasks: only a restore with handles, not yet spawned; every gate closed', () => {
      const c = ctx([mockTask('a'), mockTask('b')], {}, { now: 5, restoredHandles: { a: handle() }, removedTasks: ['a'] });
      expect(R.spawnRestoredTasks({ ...c, spawned: true })).to.deep.equal({});
      expect(R.spawnRestoredTasks({ ...c, restoredHandles: undefined })).to.deep.equal({});
      expect(R.spawnRestoredTasks({ ...c, restoredHandles: {} })).to.deep.equal({});
      const step = R.spawnRestoredTasks(c);
      expect(step.spawn!.map((i) => [i.taskName, i.gateOpen])).to.deep.equal([
        ['a', false],
        ['b', false],
      ]);
      expect(step.send).to.deep.equal([['a', kill(5)]]);
      expect(step.patch).to.deep.equal({ spawned: true });
    });
  });

  describe('gates and kill plans', () => {
    it('updateGates: nothing when the coordinator stays; before spawning, only the coordinator moves', () => {
      // A poststop task's gate stays closed from prestart to main: it is told nothing.
      const c = ctx([mockTask('init', {}, { lifecycle: { hook: 'prestart' } }), mockTask('main'), post('post')], {}, { coordinator: 'prestart' });
      expect(R.updateGates(c)).to.deep.equal({});
      expect(R.updateStoppingGates(c)).to.deep.equal({});
      const initDone = { ...c, taskStates: { ...c.taskStates, init: dead() } };
      expect(R.updateGates(initDone)).to.deep.equal({ send: [], patch: { coordinator: 'main' } });
      expect(R.updateGates({ ...initDone, spawned: true })).to.deep.equal({
        send: [
          ['init', { type: 'gate', open: false }],
          ['main', { type: 'gate', open: true }],
        ],
        patch: { coordinator: 'main' },
      });
    });

    it('stopPhases: leader, mains, sidecars; after max_run_duration the poststop tasks come first', () => {
      const c = ctx([side('s'), mockTask('lead', {}, { leader: true }), mockTask('m'), post('p1'), post('p2')]);
      expect(R.stopPhases(c)).to.deep.equal([['lead'], ['m'], ['s']]);
      expect(R.stopPhases({ ...c, maxRunExceeded: true })).to.deep.equal([['p1', 'p2'], ['lead'], ['m'], ['s']]);
      const noPost = ctx([mockTask('m')], {}, { maxRunExceeded: true });
      expect(R.stopPhases(noPost)).to.deep.equal([['m']]);
    });

    it('planStopKills: nothing to kill before spawning; the stop phases after', () => {
      const c = ctx([mockTask('m'), post('p')], {}, { killCurrent: ['x'] });
      expect(R.planStopKills(c)).to.deep.equal({ killQueue: [], killCurrent: [] });
      expect(R.planStopKills({ ...c, spawned: true })).to.deep.equal({ killQueue: [['m']], killCurrent: [] });
    });

    it('planPoststopKills: the poststop tasks still alive, in one phase', () => {
      const c = ctx([mockTask('m'), post('p1'), post('p2')], {}, { taskStates: { m: running(), p1: running(), p2: dead() } });
      expect(R.planPoststopKills(c)).to.deep.equal({ killQueue: [['p1']], killCurrent: [] });
    });

    it('planDestroyKills: a poststop task that ran and lives is killed last; one not started runs; none after max_run_duration', () => {
      const tasks = [mockTask('m'), post('ran'), post('waits'), post('over')];
      const c = ctx(tasks, {}, { spawned: true, killCurrent: ['x'], taskStates: { m: running(), ran: running(), waits: st('pending'), over: dead() } });
      expect(R.planDestroyKills({ ...c, spawned: false })).to.deep.equal({ killQueue: [], killCurrent: [] });
      expect(R.planDestroyKills(c)).to.deep.equal({ killQueue: [['m'], ['ran']], killCurrent: [] });
      expect(R.planDestroyKills({ ...c, taskStates: { ...c.taskStates, ran: st('pending') } })).to.deep.equal({ killQueue: [['m']], killCurrent: [] });
      expect(R.planDestroyKills({ ...c, maxRunExceeded: true })).to.deep.equal({ killQueue: [['ran', 'waits', 'over'], ['m']], killCurrent: [] });
      // A role the context holds no state for has not run.
      const { ran: _r, ...noState } = c.taskStates;
      expect(R.planDestroyKills({ ...c, taskStates: noState })).to.deep.equal({ killQueue: [['m']], killCurrent: [] });
    });

    it('advanceKills: a dead task of the next phase is skipped; the kill carries the reason, the skip and the max-run display', () => {
      const c = ctx(
        [mockTask('a'), mockTask('b')],
        {},
        {
          spawned: true,
          now: 50,
          killQueue: [['a', 'b'], ['c']],
          killCurrent: [],
          taskStates: { a: dead(), b: running() },
        },
      );
      expect(R.advanceKills(c)).to.deep.equal({ send: [['b', { type: 'kill', time: 50 }]], patch: { killQueue: [['c']], killCurrent: ['b'] } });
      const all = R.advanceKills({ ...c, killEvent: { type: 'Sibling Task Failed', failedSibling: 'x' }, delaysSkipped: true, maxRunExceeded: true });
      expect(all.send).to.deep.equal([
        [
          'b',
          {
            type: 'kill',
            time: 50,
            reason: taskEvent('Sibling Task Failed', 50, { details: { failed_sibling: 'x' } }),
            skipShutdownDelay: true,
            killingDisplay: MAX_RUN_DURATION_REASON,
          },
        ],
      ]);
      const lead = R.advanceKills({ ...c, killEvent: { type: 'Leader Task Dead' } });
      expect((lead.send![0]![1] as { reason: unknown }).reason).to.deep.equal(taskEvent('Leader Task Dead', 50));
      expect((lead.send![0]![1] as { reason: { details: object } }).reason.details).to.deep.equal({});
    });
  });

  describe('events the chart hands on', () => {
    it('forwardToTask: only a toTask event, only once spawned', () => {
      const c = ctx([mockTask('a')]);
      const ev: AllocMachineEvent = { type: 'toTask', taskName: 'a', event: { type: 'signal', signal: 'SIGHUP' } as never };
      expect(R.forwardToTask(c, ev)).to.deep.equal({});
      expect(R.forwardToTask({ ...c, spawned: true }, ev)).to.deep.equal({ send: [['a', { type: 'signal', signal: 'SIGHUP' }]] });
      expect(R.forwardToTask({ ...c, spawned: true }, DESTROY)).to.deep.equal({});
    });

    it('restartOne: only a restartTask event, only once spawned', () => {
      const c = ctx([mockTask('a')]);
      const ev: AllocMachineEvent = { type: 'restartTask', taskName: 'a', time: 5, reason: 'r', failure: true };
      expect(R.restartOne(c, ev)).to.deep.equal({});
      expect(R.restartOne({ ...c, spawned: true }, DESTROY)).to.deep.equal({});
      expect(R.restartOne({ ...c, spawned: true }, ev)).to.deep.equal({ send: [['a', { type: 'restart', time: 5, reason: 'r', failure: true }]] });
    });

    it('queueRestart: each kind queued in order with its time and reason; other events queue nothing', () => {
      const c = ctx([mockTask('a')], {}, { pendingRestarts: [{ kind: 'running', time: 1 }] });
      expect(R.queueRestart(c, { type: 'restartAll', time: 2, reason: 'x' })).to.deep.equal({
        pendingRestarts: [
          { kind: 'running', time: 1 },
          { kind: 'all', time: 2, reason: 'x' },
        ],
      });
      expect(R.queueRestart(c, { type: 'restartRunning', time: 3, reason: 'y' })).to.deep.equal({
        pendingRestarts: [
          { kind: 'running', time: 1 },
          { kind: 'running', time: 3, reason: 'y' },
        ],
      });
      expect(R.queueRestart(c, DESTROY)).to.deep.equal({});
    });

    it('flushRestarts: a failed restart of the running tasks (a group check_restart) tells each task it is a failure', () => {
      const c = ctx([mockTask('a'), mockTask('b')], {}, { spawned: true });
      const queued = { ...c, ...R.queueRestart(c, { type: 'restartRunning', time: 4, reason: 'healthcheck', failure: true }) };
      expect(queued.pendingRestarts).to.deep.equal([{ kind: 'running', time: 4, reason: 'healthcheck', failure: true }]);
      expect(R.flushRestarts(queued).send).to.deep.equal([
        ['a', { type: 'restart', time: 4, reason: 'healthcheck', failure: true }],
        ['b', { type: 'restart', time: 4, reason: 'healthcheck', failure: true }],
      ]);
    });

    it('lastRuns and skipDelays: every task told once spawned; skipDelays only once', () => {
      const c = ctx([mockTask('a'), mockTask('b')]);
      expect(R.lastRuns(c)).to.deep.equal({});
      expect(R.lastRuns({ ...c, spawned: true })).to.deep.equal({
        send: [
          ['a', { type: 'finalRun' }],
          ['b', { type: 'finalRun' }],
        ],
      });
      expect(R.skipDelays(c)).to.deep.equal({ patch: { delaysSkipped: true }, send: [] });
      expect(R.skipDelays({ ...c, spawned: true })).to.deep.equal({
        patch: { delaysSkipped: true },
        send: [
          ['a', { type: 'skipShutdownDelay' }],
          ['b', { type: 'skipShutdownDelay' }],
        ],
      });
      expect(R.skipDelays({ ...c, spawned: true, delaysSkipped: true })).to.deep.equal({});
    });
  });

  it('spawnTasks without restored handles kills nothing (a removed task has no saved run)', () => {
    const c = ctx([mockTask('a')], {}, { removedTasks: ['a'], taskStates: { a: st('pending') } });
    expect(R.spawnTasks(c).send).to.deep.equal([]);
  });

  it("planMigration reads the alloc's own group's ephemeral disk (not the job's first group); no group, no disk", () => {
    const c = ctx([mockTask('a')], { previousAllocation: 'prev' }, { watchSources: { previousRunner: true } });
    const own = c.alloc.job.taskGroups[0]!;
    const withGroups = (groups: (typeof own)[]) => ({ ...c, alloc: { ...c.alloc, job: { ...c.alloc.job, taskGroups: groups } } });
    const first = { ...own, name: 'first', ephemeralDisk: {} };
    expect(R.planMigration(withGroups([first, { ...own, ephemeralDisk: { sticky: true } }]))).to.deep.equal({ kind: 'local', previousAllocId: 'prev' });
    expect(R.planMigration(withGroups([first]))).to.deep.equal({
      kind: 'skip',
      previousAllocId: 'prev',
      reason: 'ephemeral disk is neither sticky nor migrate',
    });
  });

  describe('task states, updates and the clock', () => {
    it('recordTaskState: the state and its event count, version bumped; other events change nothing', () => {
      const c = ctx([mockTask('a'), mockTask('b')], {}, { version: 3 });
      const s = running();
      expect(R.recordTaskState(c, { type: 'task.state', taskName: 'a', state: s, eventSeq: 9 })).to.deep.equal({
        taskStates: { a: s, b: c.taskStates.b },
        eventSeq: { a: 9, b: 1 },
        version: 4,
      });
      expect(R.recordTaskState(c, DESTROY)).to.deep.equal({});
    });

    it('applyUpdate / isStaleUpdate: an equal or newer index applies, an older one is stale; other events neither', () => {
      const c = ctx([mockTask('a')], { allocModifyIndex: 5 }, { version: 3, now: 30 });
      const at = (i: number) => ({ ...c.alloc, allocModifyIndex: i });
      const cases: Array<[number, number, boolean]> = [
        [4, 40, false],
        [5, 40, true],
        [6, 20, true],
      ];
      for (const [index, time, applies] of cases) {
        const e = update(at(index), time);
        expect(R.applyUpdate(c, e), `index ${index}`).to.deep.equal(applies ? { alloc: at(index), version: 4, now: Math.max(30, time) } : {});
        expect(R.isStaleUpdate(c, e), `index ${index}`).to.equal(!applies);
      }
      expect(R.applyUpdate(c, DESTROY)).to.deep.equal({});
      expect(R.isStaleUpdate(c, DESTROY)).to.equal(false);
      expect(R.queueUpdate(c, DESTROY)).to.deep.equal({});
    });

    it('stampNow: moves now forward to an event time, never back; an event without time leaves it', () => {
      const c = ctx([mockTask('a')], {}, { now: 30 });
      expect(R.stampNow(c, DESTROY)).to.deep.equal({ now: 99 });
      expect(R.stampNow(c, { type: 'destroy', time: 10 })).to.deep.equal({ now: 30 });
      expect(R.stampNow(c, { type: 'task.state', taskName: 'a', state: running(), eventSeq: 1 })).to.deep.equal({});
      expect(R.stampNow(c, { type: 'destroy' } as never)).to.deep.equal({});
      expect(R.stampNow(c, { type: 'destroy', time: 'soon' } as never)).to.deep.equal({});
    });

    it('noteSkipDelays: once skipped stays skipped; an update with noShutdownDelay skips; nothing else does', () => {
      const c = ctx([mockTask('a')]);
      const skip = { ...c.alloc, desiredTransition: { noShutdownDelay: true } };
      const cases: Array<[boolean, AllocMachineEvent, boolean]> = [
        [false, update(c.alloc), false],
        [false, update(skip), true],
        [true, update(c.alloc), true],
        [true, DESTROY, true],
        [false, DESTROY, false],
      ];
      for (const [was, e, now] of cases) expect(R.noteSkipDelays({ ...c, delaysSkipped: was }, e), `${was} ${e.type}`).to.deep.equal({ delaysSkipped: now });
    });

    it('restoreFailed: failed with the error text, version bumped', () => {
      const c = ctx([mockTask('a')], {}, { version: 1 });
      expect(R.restoreFailed(c, { error: new Error('alloc dir gone') })).to.deep.equal({
        statusOverride: { status: 'failed', description: 'alloc dir gone' },
        version: 2,
      });
    });

    it("maxRunExceeded: complete with Nomad's reason; now moves to the timer's time, never back", () => {
      const c = ctx([mockTask('a')], {}, { version: 1, now: 30 });
      const base = { maxRunExceeded: true, statusOverride: { status: 'complete', description: MAX_RUN_DURATION_REASON }, version: 2 };
      expect(R.maxRunExceeded(c, { type: 'maxRunDuration.elapsed', deadline: 40, time: 45 })).to.deep.equal({ ...base, now: 45 });
      expect(R.maxRunExceeded(c, { type: 'maxRunDuration.elapsed', deadline: 20, time: 20 })).to.deep.equal({ ...base, now: 30 });
      expect(R.maxRunExceeded(c, DESTROY)).to.deep.equal({ ...base, now: 30 });
    });

    it('armMaxRun: open without a deadline, a timer child with one', () => {
      const c = ctx([mockTask('a')]);
      expect(R.armMaxRun(c)).to.deep.equal({ patch: { maxRunTimer: 'open' } });
      expect(R.armMaxRun({ ...c, maxRunDeadline: 77 })).to.deep.equal({ timer: { spawn: 77 }, patch: { maxRunTimer: 'armed' } });
    });
  });

  describe('reconnect', () => {
    it('takes only the new index, bumps the version, moves now forward; spawned tasks get an append each', () => {
      const c = ctx([mockTask('a'), mockTask('b')], { allocModifyIndex: 5 }, { version: 2, now: 30, spawned: true });
      const next = { ...c.alloc, allocModifyIndex: 9, desiredStatus: 'stop' as const };
      const ev = taskEvent('Reconnected', 40);
      expect(R.reconnect(c, update(next, 40))).to.deep.equal({
        send: [
          ['a', { type: 'append', event: ev }],
          ['b', { type: 'append', event: ev }],
        ],
        patch: { alloc: { ...c.alloc, allocModifyIndex: 9 }, version: 3, now: 40 },
      });
      expect(R.reconnect(c, update(next, 10)).patch!.now).to.equal(30);
      expect(R.reconnect(c, DESTROY)).to.deep.equal({});
    });

    it('before spawning, the event is appended to each task state and counted', () => {
      const c = ctx([mockTask('a'), mockTask('b')], { allocModifyIndex: 5 }, { version: 2, now: 30, eventSeq: { a: 4, b: 1 } });
      const next = { ...c.alloc, allocModifyIndex: 9 };
      const ev = taskEvent('Reconnected', 40);
      expect(R.reconnect(c, update(next, 40))).to.deep.equal({
        patch: {
          alloc: next,
          version: 3,
          now: 40,
          taskStates: {
            a: { ...c.taskStates.a!, events: [...c.taskStates.a!.events, ev] },
            b: { ...c.taskStates.b!, events: [...c.taskStates.b!.events, ev] },
          },
          eventSeq: { a: 5, b: 2 },
        },
      });
    });
  });

  describe('applyTaskChanges', () => {
    const kill = (time: number) => ({ type: 'kill', time, reason: missingTaskEvent(time), noKillingEvent: true });

    it('other events change nothing; an update naming no group of this alloc only checks the deadline', () => {
      const c = ctx([mockTask('a')]);
      expect(R.applyTaskChanges(c, DESTROY)).to.deep.equal({});
      expect(R.applyTaskChanges(c, update({ ...c.alloc, taskGroup: 'gone' }))).to.deep.equal({ patch: {}, send: [] });
    });

    it("an unchanged update changes nothing but re-states the tasks and the group's delay", () => {
      const c = ctx([mockTask('a')], { group: { shutdownDelayMs: 300 } }, { spawned: true, taskStates: { a: running() } });
      expect(R.applyTaskChanges(c, update(c.alloc))).to.deep.equal({ patch: { tasks: c.tasks, groupShutdownDelayMs: 300 }, send: [] });
      // A group that stops naming a delay keeps the one the alloc had.
      const noDelay = makeAlloc([mockTask('a')], { id: c.allocId });
      expect(R.applyTaskChanges(c, update(noDelay)).patch!.groupShutdownDelayMs).to.equal(300);
    });

    it("the update's own group is the one read (not the job's first)", () => {
      const c = ctx([mockTask('a'), mockTask('b')], {}, { spawned: true, taskStates: { a: running(), b: running() } });
      const next: Allocation = {
        ...c.alloc,
        job: { ...c.alloc.job, taskGroups: [{ name: 'other', count: 1, tasks: [mockTask('a')] }, c.alloc.job.taskGroups[0]!] },
      };
      expect(R.applyTaskChanges(c, update(next)).send).to.deep.equal([]);
    });

    it('spawned: each dropped task still alive is killed once; one dropped before is not dropped again; a dead one is not killed', () => {
      const c = ctx(
        [mockTask('a'), mockTask('b'), mockTask('c'), mockTask('d')],
        {},
        {
          spawned: true,
          removedTasks: ['d'],
          taskStates: { a: running(), b: running(), c: dead(), d: running() },
        },
      );
      const next = makeAlloc([mockTask('a')], { id: c.allocId });
      const step = R.applyTaskChanges(c, update(next, 20));
      expect(step.patch!.removedTasks).to.deep.equal(['d', 'b', 'c']);
      expect(step.send).to.deep.equal([['b', kill(20)]]);
      // Nothing dropped: removedTasks is not re-stated.
      expect(R.applyTaskChanges(c, update(c.alloc)).patch).to.not.have.property('removedTasks');
    });

    it('not spawned: a dropped task never starts (dead with the event); a restored one is left for its kill', () => {
      const c = ctx(
        [mockTask('a'), mockTask('b'), mockTask('r')],
        {},
        {
          version: 2,
          eventSeq: { a: 1, b: 3, r: 1 },
          restoredHandles: { r: handle() },
          taskStates: { a: st('pending'), b: st('pending', { finishedAt: 4 }), r: st('running') },
        },
      );
      const next = makeAlloc([mockTask('a')], { id: c.allocId });
      const step = R.applyTaskChanges(c, update(next, 20));
      expect(step.send).to.deep.equal([]);
      expect(step.patch).to.deep.include({
        removedTasks: ['b', 'r'],
        version: 3,
        eventSeq: { a: 1, b: 4, r: 1 },
        taskStates: {
          a: c.taskStates.a,
          b: { state: 'dead', failed: true, restarts: 0, finishedAt: 4, events: [missingTaskEvent(20)] },
          r: c.taskStates.r,
        },
      });
      const fresh = R.applyTaskChanges({ ...c, taskStates: { ...c.taskStates, b: st('pending') } }, update(next, 20));
      expect(fresh.patch!.taskStates!.b!.finishedAt).to.equal(20);
      // Only restored tasks dropped: nothing to mark now.
      const onlyRestored = makeAlloc([mockTask('a'), mockTask('b')], { id: c.allocId });
      const step2 = R.applyTaskChanges(c, update(onlyRestored, 20));
      expect(step2.patch).to.deep.include({ removedTasks: ['r'] });
      expect(step2.patch).to.not.have.property('taskStates');
      expect(step2.patch).to.not.have.property('version');
    });

    it('not spawned and nothing restored (an update during the prerun hooks): the dropped task is dead at once', () => {
      const c = ctx([mockTask('a'), mockTask('b')], {}, { version: 1 });
      expect(c.restoredHandles).to.equal(undefined);
      const step = R.applyTaskChanges(c, update(makeAlloc([mockTask('a')], { id: c.allocId }), 20));
      expect(step.send).to.deep.equal([]);
      expect(step.patch!.taskStates!.b).to.deep.include({ state: 'dead', failed: true, finishedAt: 20 });
      expect(step.patch!.taskStates!.a).to.equal(c.taskStates.a);
    });

    const settingCases: Array<[string, Partial<Task>]> = [
      ['kill timeout', { killTimeoutMs: 2000 }],
      ['kill signal', { killSignal: 'SIGTERM' }],
      ['shutdown delay', { shutdownDelayMs: 400 }],
    ];
    for (const [what, change] of settingCases)
      it(`a changed ${what} alone is handed to the kept task and kept in the context`, () => {
        const c = ctx([mockTask('a'), mockTask('b')], {}, { spawned: true, taskStates: { a: running(), b: running() } });
        const next = makeAlloc([mockTask('a', {}, change), mockTask('b')], { id: c.allocId });
        const step = R.applyTaskChanges(c, update(next));
        const was = c.tasks.a!;
        const now = {
          killTimeoutMs: change.killTimeoutMs ?? was.killTimeoutMs,
          killSignal: change.killSignal ?? was.killSignal,
          shutdownDelayMs: change.shutdownDelayMs ?? 0,
        };
        expect(step.send).to.deep.equal([['a', { type: 'settings', ...now }]]);
        expect(step.patch!.tasks).to.deep.equal({ a: { ...was, ...now }, b: c.tasks.b });
      });

    it('the max_run_duration deadline: unchanged arms nothing; open and none stays open; a cleared deadline disarms an armed timer', () => {
      const c = ctx([mockTask('t')], { jobType: 'batch', createTime: 1000, group: { maxRunDurationMs: 500 } }, { spawned: true });
      expect(c.maxRunDeadline).to.equal(1500);
      const same = update(c.alloc);
      for (const timer of ['open', 'armed', 'closed', 'never'] as const) {
        const step = R.applyTaskChanges({ ...c, maxRunTimer: timer }, same);
        expect(step.timer, timer).to.equal(undefined);
        expect(step.patch, timer).to.not.have.property('maxRunDeadline');
      }
      const cleared = update(makeAlloc([mockTask('t')], { id: c.allocId, jobType: 'batch', createTime: 1000 }));
      const open = R.applyTaskChanges({ ...c, maxRunTimer: 'open' }, cleared);
      expect(open.timer).to.equal(undefined);
      expect(open.patch).to.not.have.property('maxRunTimer');
      expect(open.patch).to.have.property('maxRunDeadline', undefined);
      expect(R.applyTaskChanges({ ...c, maxRunTimer: 'armed' }, cleared).timer).to.deep.equal({ arm: undefined });
      const longer = update(makeAlloc([mockTask('t')], { id: c.allocId, jobType: 'batch', createTime: 1000, group: { maxRunDurationMs: 900 } }));
      const spawned = R.applyTaskChanges({ ...c, maxRunTimer: 'open' }, longer);
      expect(spawned.timer).to.deep.equal({ spawn: 1900 });
      expect(spawned.patch).to.deep.include({ maxRunTimer: 'armed', maxRunDeadline: 1900 });
    });
  });
});
