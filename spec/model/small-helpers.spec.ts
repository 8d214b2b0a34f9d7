import { expect } from 'chai';
import { allocResult } from '../../model/alloc-result.ts';
import { realClock, sleep, type Clock } from '../../model/clock.ts';
import { isClientTerminalStatus, isServerTerminal, isTerminal, isTerminated, shouldMigrate, taskGroupOf, tasksDead } from '../../model/status.ts';
import { addUsage, emptyUsage, type ResourceUsage } from '../../model/usage.ts';
import type { Allocation, TaskState } from '../../model/types.ts';
import { makeAlloc, mockTask } from '../support/fixtures.ts';

const dead = (extra: Partial<TaskState> = {}): TaskState => ({ state: 'dead', failed: false, restarts: 0, events: [], ...extra });

describe('model: allocResult', () => {
  const withStates = (clientStatus: Allocation['clientStatus'], taskStates: Allocation['taskStates']): Allocation => ({
    ...makeAlloc([mockTask('web')]),
    clientStatus,
    taskStates,
  });

  it('is undefined until the client status is terminal and every task is dead', () => {
    expect(allocResult(withStates('running', { web: dead() }))).to.equal(undefined);
    expect(allocResult(withStates('pending', { web: dead() }))).to.equal(undefined);
    expect(allocResult(withStates('complete', { web: dead(), api: { ...dead(), state: 'running' } }))).to.equal(undefined);
    expect(allocResult(withStates('failed', { web: { ...dead(), state: 'pending' } }))).to.equal(undefined);
  });

  it('reports each task with its typed exit fields, leaving out those it does not have', () => {
    const r = allocResult(
      withStates('failed', {
        web: dead({ failed: true, exitCode: 137, signal: 9, oomKilled: true, restarts: 2, startedAt: 10, finishedAt: 20 }),
        api: dead({ exitCode: 0 }),
        never: dead(),
      }),
    );
    expect(r).to.deep.equal({
      clientStatus: 'failed',
      tasks: {
        web: { state: 'dead', failed: true, exitCode: 137, signal: 9, oomKilled: true, restarts: 2, startedAt: 10, finishedAt: 20 },
        api: { state: 'dead', failed: false, exitCode: 0, oomKilled: false, restarts: 0 },
        never: { state: 'dead', failed: false, oomKilled: false, restarts: 0 },
      },
    });
  });

  it('a lost or complete alloc with no task states has no tasks', () => {
    expect(allocResult(withStates('lost', undefined))).to.deep.equal({ clientStatus: 'lost', tasks: {} });
    expect(allocResult(withStates('complete', {}))).to.deep.equal({ clientStatus: 'complete', tasks: {} });
  });
});

describe('model: status predicates', () => {
  it('client-terminal statuses are complete, failed and lost', () => {
    for (const s of ['complete', 'failed', 'lost'] as const) expect(isClientTerminalStatus(s), s).to.equal(true);
    for (const s of ['pending', 'running', undefined] as const) expect(isClientTerminalStatus(s), String(s)).to.equal(false);
    expect(isTerminated({ clientStatus: 'lost' })).to.equal(true);
    expect(isTerminated({ clientStatus: 'running' })).to.equal(false);
  });

  it('server-terminal is stop or evict; terminal is either side', () => {
    expect(isServerTerminal({ desiredStatus: 'stop' })).to.equal(true);
    expect(isServerTerminal({ desiredStatus: 'evict' })).to.equal(true);
    expect(isServerTerminal({ desiredStatus: 'run' })).to.equal(false);
    expect(isTerminal({ desiredStatus: 'run', clientStatus: 'running' })).to.equal(false);
    expect(isTerminal({ desiredStatus: 'stop', clientStatus: 'running' })).to.equal(true);
    expect(isTerminal({ desiredStatus: 'run', clientStatus: 'complete' })).to.equal(true);
  });

  it('tasksDead: every task dead (vacuously true with none)', () => {
    expect(tasksDead(undefined)).to.equal(true);
    expect(tasksDead({ a: dead(), b: dead() })).to.equal(true);
    expect(tasksDead({ a: dead(), b: { ...dead(), state: 'running' } })).to.equal(false);
  });

  it('shouldMigrate: a previous alloc, not stopping, and a group whose ephemeral disk migrates', () => {
    const base = makeAlloc([mockTask('web')], { group: { ephemeralDisk: { sticky: true, migrate: true, sizeMB: 10 } } });
    expect(shouldMigrate({ ...base, previousAllocation: 'p' })).to.equal(true);
    expect(shouldMigrate({ ...base, previousAllocation: undefined })).to.equal(false);
    expect(shouldMigrate({ ...base, previousAllocation: 'p', desiredStatus: 'stop' })).to.equal(false);
    expect(shouldMigrate({ ...base, previousAllocation: 'p', taskGroup: 'other' })).to.equal(false);
    expect(shouldMigrate({ ...makeAlloc([mockTask('web')]), previousAllocation: 'p' }), 'no ephemeral disk').to.equal(false);
    const noMigrate = makeAlloc([mockTask('web')], { group: { ephemeralDisk: { sticky: true, migrate: false, sizeMB: 10 } } });
    expect(shouldMigrate({ ...noMigrate, previousAllocation: 'p' })).to.equal(false);
  });

  it('taskGroupOf finds the alloc’s group or names the one missing', () => {
    const a = makeAlloc([mockTask('web')]);
    expect(taskGroupOf(a).name).to.equal(a.taskGroup);
    expect(() => taskGroupOf({ ...a, taskGroup: 'nope' })).to.throw('failed to lookup task group "nope"');
  });
});

describe('model: sleep on a clock', () => {
  /** A manual clock: timers fire only when the test advances it. */
  function manual() {
    let now = 0;
    const timers = new Map<number, { at: number; fn: () => void }>();
    let next = 1;
    const clock: Clock = {
      now: () => now,
      setTimeout: (fn, ms) => {
        timers.set(next, { at: now + ms, fn });
        return next++;
      },
      clearTimeout: (h) => void timers.delete(h as number),
    };
    const advance = (ms: number) => {
      now += ms;
      for (const [h, t] of [...timers]) if (t.at <= now) timers.delete(h) && t.fn();
    };
    return { clock, timers, advance, delays: () => [...timers.values()].map((t) => t.at - now) };
  }

  it('resolves when its clock reaches the delay, and not before', async () => {
    const m = manual();
    let done = false;
    const p = sleep(100, undefined, m.clock).then(() => (done = true));
    expect(m.delays()).to.deep.equal([100]);
    m.advance(99);
    await Promise.resolve();
    expect(done).to.equal(false);
    m.advance(1);
    await p;
    expect(done).to.equal(true);
  });

  it('a negative delay is a zero delay', () => {
    const m = manual();
    void sleep(-5, undefined, m.clock);
    expect(m.delays()).to.deep.equal([0]);
  });

  it('an abort rejects with the reason and cancels the timer; a settled sleep leaves no listener', async () => {
    const m = manual();
    const ac = new AbortController();
    const p = sleep(100, ac.signal, m.clock);
    ac.abort(new Error('stop'));
    await p.then(
      () => expect.fail('resolved'),
      (e) => expect((e as Error).message).to.equal('stop'),
    );
    expect(m.timers.size).to.equal(0);

    const ac2 = new AbortController();
    let listeners = 0;
    const add = ac2.signal.addEventListener.bind(ac2.signal);
    const remove = ac2.signal.removeEventListener.bind(ac2.signal);
    ac2.signal.addEventListener = ((t: string, l: EventListener, o?: AddEventListenerOptions) => {
      listeners++;
      expect(t).to.equal('abort');
      expect(o).to.deep.equal({ once: true });
      add(t, l, o);
    }) as typeof ac2.signal.addEventListener;
    ac2.signal.removeEventListener = ((t: string, l: EventListener) => {
      listeners--;
      expect(t).to.equal('abort');
      remove(t, l);
    }) as typeof ac2.signal.removeEventListener;
    const q = sleep(10, ac2.signal, m.clock);
    expect(listeners).to.equal(1);
    m.advance(10);
    await q;
    expect(listeners).to.equal(0);
  });

  it('an already-aborted signal rejects at once, starting no timer', async () => {
    const m = manual();
    const err = await sleep(10, AbortSignal.abort(new Error('early')), m.clock).catch((e) => e);
    expect((err as Error).message).to.equal('early');
    expect(m.timers.size).to.equal(0);
  });

  it('realClock reads Date.now and its timers can be cancelled', async () => {
    const before = Date.now();
    const t = realClock.now();
    expect(t).to.be.within(before, Date.now());
    let fired = false;
    const h = realClock.setTimeout(() => (fired = true), 0);
    realClock.clearTimeout(h);
    const h2 = realClock.setTimeout(() => undefined, 0);
    expect(h2).to.have.property('unref'); // a Node timer handle, passed back as given
    await new Promise<void>((r) => realClock.setTimeout(r, 0));
    expect(fired).to.equal(false);
  });
});

describe('model: resource usage sums', () => {
  const u = (k: number, mm: string[], cm: string[]): ResourceUsage => ({
    memoryStats: { rss: k, cache: k + 1, swap: k + 2, usage: k + 3, maxUsage: k + 4, measured: mm },
    cpuStats: { systemMode: k + 5, userMode: k + 6, totalTicks: k + 7, percent: k + 8, throttledPeriods: k + 9, throttledTime: k + 10, measured: cm },
  });

  it('emptyUsage is all zeros with nothing measured', () => {
    expect(emptyUsage()).to.deep.equal({
      memoryStats: { rss: 0, cache: 0, swap: 0, usage: 0, maxUsage: 0, measured: [] },
      cpuStats: { systemMode: 0, userMode: 0, totalTicks: 0, percent: 0, throttledPeriods: 0, throttledTime: 0, measured: [] },
    });
  });

  it('addUsage sums every field and unions what was measured', () => {
    expect(addUsage(u(10, ['RSS'], ['User Mode']), u(100, ['RSS', 'Cache'], ['System Mode']))).to.deep.equal({
      memoryStats: { rss: 110, cache: 112, swap: 114, usage: 116, maxUsage: 118, measured: ['RSS', 'Cache'] },
      cpuStats: {
        systemMode: 120,
        userMode: 122,
        totalTicks: 124,
        percent: 126,
        throttledPeriods: 128,
        throttledTime: 130,
        measured: ['User Mode', 'System Mode'],
      },
    });
  });
});
