import { expect } from 'chai';
import { allocMachine } from '../../../machines/alloc/chart.ts';
import { allocMachineInput } from '../../../machines/alloc/input.ts';
import * as R from '../../../machines/alloc/reducers.ts';
import type { AllocContext, AllocMachineEvent } from '../../../machines/alloc/context.ts';
import { AllocDirInaccessibleError } from '../../../model/errors.ts';
import type { Task, TaskState } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

/**
 * The alloc chart's guards and delays are plain functions of its context and event: each is
 * asked here over the cases its conditions tell apart, as the chart asks it.
 */
type Guard = (args: { context: AllocContext; event: AllocMachineEvent }) => boolean;
const guards = allocMachine.implementations.guards as unknown as Record<string, Guard>;
const delays = allocMachine.implementations.delays as unknown as Record<string, (args: { context: AllocContext }) => number>;

const SOURCES = { now: 10, maxKillTimeoutMs: 30_000, hasUpdateHooks: false };
function ctx(tasks: Task[], over: Parameters<typeof makeAlloc>[1] = {}, patch: Partial<AllocContext> = {}): AllocContext {
  return { ...R.initialContext(allocMachineInput(makeAlloc(tasks, over), undefined, SOURCES).input), ...patch };
}

const st = (state: TaskState['state'], over: Partial<TaskState> = {}): TaskState => ({ state, failed: false, restarts: 0, events: [], ...over });
const post = (name: string) => mockTask(name, {}, { lifecycle: { hook: 'poststop' } });
const DESTROY: AllocMachineEvent = { type: 'destroy', time: 1 };
const ask = (name: string, context: AllocContext, event: AllocMachineEvent = DESTROY) => guards[name]!({ context, event });

/** A main task and a poststop task, in the given states. */
const mainPost = (main: TaskState['state'], poststop: TaskState['state'], patch: Partial<AllocContext> = {}) =>
  ctx([mockTask('m'), post('p')], {}, { taskStates: { m: st(main), p: st(poststop) }, ...patch });

describe('alloc chart guards and delays (each case)', () => {
  it('allMainDead / poststopDone / allDead: which tasks each counts', () => {
    const cases: Array<[TaskState['state'], TaskState['state'], boolean, [boolean, boolean, boolean]]> = [
      ['running', 'pending', true, [false, false, false]],
      ['dead', 'pending', true, [true, false, false]],
      ['running', 'dead', true, [false, true, false]],
      ['dead', 'dead', true, [true, true, true]],
      // Nothing spawned: nothing to wait for.
      ['running', 'running', false, [false, true, true]],
    ];
    for (const [m, p, spawned, [allMain, poststop, all]] of cases) {
      const c = mainPost(m, p, { spawned });
      const label = `${m}/${p} spawned=${spawned}`;
      expect(ask('allMainDead', c), label).to.equal(allMain);
      expect(ask('poststopDone', c), label).to.equal(poststop);
      expect(ask('allDead', c), label).to.equal(all);
    }
  });

  it("groupDelayDue: a stop waits the group's shutdown_delay only when spawned, with a delay, not skipped, and a non-poststop task alive", () => {
    const base = { spawned: true, groupShutdownDelayMs: 100 };
    const cases: Array<[string, AllocContext, boolean]> = [
      ['main running, poststop pending', mainPost('running', 'pending', base), true],
      ['main dead, poststop pending', mainPost('dead', 'pending', base), false],
      ['main dead, poststop running', mainPost('dead', 'running', base), false],
      ['not spawned', mainPost('running', 'pending', { ...base, spawned: false }), false],
      ['no delay', mainPost('running', 'pending', { ...base, groupShutdownDelayMs: 0 }), false],
      ['delays skipped', mainPost('running', 'pending', { ...base, delaysSkipped: true }), false],
    ];
    for (const [name, c, due] of cases) expect(ask('groupDelayDue', c), name).to.equal(due);
  });

  it("restartDelayDue: a group restart waits the group's delay only with a delay, not skipped, and a non-poststop task running", () => {
    const base = { groupShutdownDelayMs: 100 };
    const cases: Array<[string, AllocContext, boolean]> = [
      ['main running, poststop pending', mainPost('running', 'pending', base), true],
      ['main pending (restarting), poststop pending', mainPost('pending', 'pending', base), false],
      ['main dead, poststop running', mainPost('dead', 'running', base), false],
      ['no delay', mainPost('running', 'pending', { groupShutdownDelayMs: 0 }), false],
      ['delays skipped', mainPost('running', 'pending', { ...base, delaysSkipped: true }), false],
      ['no task state reported yet', mainPost('running', 'pending', { ...base, taskStates: {} }), false],
    ];
    for (const [name, c, due] of cases) expect(ask('restartDelayDue', c), name).to.equal(due);
  });

  it('needsPostrun / needsPreKill: postrun once, after a run or for an alloc that arrived terminal; preKill once, after a spawn', () => {
    const c = ctx([mockTask('m')]);
    const cases: Array<[Partial<AllocContext>, boolean, boolean]> = [
      [{}, false, false],
      [{ spawned: true }, true, true],
      [{ arrivedTerminal: true }, true, false],
      [{ spawned: true, postrunDone: true, preKillDone: true }, false, false],
      [{ arrivedTerminal: true, postrunDone: true }, false, false],
    ];
    for (const [patch, postrun, prekill] of cases) {
      expect(ask('needsPostrun', { ...c, ...patch }), JSON.stringify(patch)).to.equal(postrun);
      expect(ask('needsPreKill', { ...c, ...patch }), JSON.stringify(patch)).to.equal(prekill);
    }
  });

  it('killDone: the kill plan is spent and the current phase dead', () => {
    const c = ctx([mockTask('a'), mockTask('b')], {}, { taskStates: { a: st('dead'), b: st('running') } });
    const cases: Array<[string[][], string[], boolean]> = [
      [[], [], true],
      [[], ['a'], true],
      [[], ['a', 'b'], false],
      [[['b']], ['a'], false],
      [[['b']], [], false],
    ];
    for (const [killQueue, killCurrent, done] of cases)
      expect(ask('killDone', { ...c, killQueue, killCurrent }), JSON.stringify([killQueue, killCurrent])).to.equal(done);
  });

  it('maxRunDue: only the timer armed for the current deadline, at or after it', () => {
    const c = ctx([mockTask('a')], {}, { maxRunDeadline: 100 });
    const fired = (deadline: number, time: number): AllocMachineEvent => ({ type: 'maxRunDuration.elapsed', deadline, time });
    const cases: Array<[string, AllocContext, AllocMachineEvent, boolean]> = [
      ['on time', c, fired(100, 100), true],
      ['late', c, fired(100, 150), true],
      ['early (a clock jump back)', c, fired(100, 99), false],
      ['an old deadline (moved since)', c, fired(90, 150), false],
      ['no deadline any more', { ...c, maxRunDeadline: undefined }, fired(100, 150), false],
      ['another event', c, { type: 'destroy', time: 150 }, false],
      ['another event with the fields', c, { type: 'destroy', time: 150, deadline: 100 } as never, false],
    ];
    for (const [name, context, event, due] of cases) expect(ask('maxRunDue', context, event), name).to.equal(due);
  });

  it('update guards: each looks at an update only', () => {
    const c = ctx([mockTask('a')], { allocModifyIndex: 5 }, { hasUpdateHooks: true });
    const stop = { ...c.alloc, desiredStatus: 'stop' as const, allocModifyIndex: 6 };
    const skip = { ...c.alloc, allocModifyIndex: 6, desiredTransition: { noShutdownDelay: true } };
    // Nomad's reconnect: the servers' newer alloc says `unknown` (the client was cut off meanwhile).
    const unknown = { ...c.alloc, allocModifyIndex: 6, clientStatus: 'unknown' as const };
    const running = { ...c.alloc, allocModifyIndex: 6, clientStatus: 'running' as const };
    // A destroy event carrying an alloc's fields: the type alone decides.
    const notUpdate = (alloc: unknown) => ({ type: 'destroy', time: 1, alloc }) as never;
    const cases: Array<[string, AllocContext, AllocMachineEvent, boolean]> = [
      ['terminalUpdate', c, { type: 'update', alloc: stop, time: 1 }, true],
      ['terminalUpdate', c, { type: 'update', alloc: skip, time: 1 }, false],
      ['terminalUpdate', c, notUpdate(stop), false],
      ['skipsDelays', c, { type: 'update', alloc: skip, time: 1 }, true],
      ['skipsDelays', c, { type: 'update', alloc: stop, time: 1 }, false],
      ['skipsDelays', c, notUpdate(skip), false],
      ['reconnect', c, { type: 'update', alloc: unknown, time: 1 }, true],
      ['reconnect', c, { type: 'update', alloc: running, time: 1 }, false],
      ['reconnect', c, notUpdate(unknown), false],
      ['mustQueue', c, { type: 'update', alloc: running, time: 1 }, true],
      ['mustQueue', c, { type: 'update', alloc: running, time: 1, released: true }, false],
      ['mustQueue', { ...c, hasUpdateHooks: false }, { type: 'update', alloc: running, time: 1 }, false],
      ['mustQueue', c, notUpdate(running), false],
      ['staleUpdate', c, { type: 'update', alloc: { ...c.alloc, allocModifyIndex: 4 }, time: 1 }, true],
      ['staleUpdate', c, { type: 'update', alloc: c.alloc, time: 1 }, false],
    ];
    for (const [name, context, event, yes] of cases) expect(ask(name, context, event), `${name} ${JSON.stringify(event).slice(0, 60)}`).to.equal(yes);
  });

  it('the context flags the chart branches on', () => {
    const c = ctx([mockTask('a')]);
    const cases: Array<[string, Partial<AllocContext>, boolean]> = [
      ['nothingWatched', { hasWatched: false }, true],
      ['nothingWatched', { hasWatched: true }, false],
      ['hasWaitTimeout', { prevAllocWaitTimeoutMs: 0 }, true],
      ['hasWaitTimeout', { prevAllocWaitTimeoutMs: undefined }, false],
      ['stopRequested', { alloc: { ...c.alloc, desiredStatus: 'stop' } }, true],
      ['stopRequested', {}, false],
      ['arrivedTerminal', { arrivedTerminal: true }, true],
      ['destroyRequested', { destroyRequested: true }, true],
      ['destroyRequested', {}, false],
      ['delaysSkipped', { delaysSkipped: true }, true],
      ['mustKillGroup', { roles: c.roles, taskStates: { a: st('dead', { failed: true }) } }, false],
    ];
    for (const [name, patch, yes] of cases) expect(ask(name, { ...c, ...patch }), `${name} ${JSON.stringify(patch).slice(0, 60)}`).to.equal(yes);
    const two = ctx([mockTask('a'), mockTask('b')], {}, { taskStates: { a: st('dead', { failed: true }), b: st('running') } });
    expect(ask('mustKillGroup', two)).to.equal(true);
  });

  it('dirInaccessible: only the alloc-dir-gone error of a restore, not any build failure', () => {
    const c = ctx([mockTask('a')]);
    expect(
      guards.dirInaccessible!({
        context: c,
        event: { type: 'xstate.error.actor.alloc-dir', error: new AllocDirInaccessibleError('alloc dir /x is gone') } as never,
      }),
    ).to.equal(true);
    expect(guards.dirInaccessible!({ context: c, event: { type: 'xstate.error.actor.alloc-dir', error: new Error('disk full') } as never })).to.equal(false);
  });

  it('delays: the poststop bound is the client max kill timeout; an unbounded wait is the longest timer Node keeps', () => {
    const c = ctx([mockTask('a')], {}, { maxKillTimeoutMs: 1234, groupShutdownDelayMs: 55, prevAllocWaitTimeoutMs: 66 });
    expect(delays.poststopBound!({ context: c })).to.equal(1234);
    expect(delays.groupShutdownDelay!({ context: c })).to.equal(55);
    expect(delays.prevAllocWait!({ context: c })).to.equal(66);
    // Node clamps anything above 2^31 - 1 ms to 1 ms: an unbounded wait must stay at the top.
    expect(delays.prevAllocWait!({ context: { ...c, prevAllocWaitTimeoutMs: undefined } })).to.equal(2 ** 31 - 1);
  });
});
