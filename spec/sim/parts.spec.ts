/**
 * The simulator's parts on their own: the virtual clock, the seeded random streams, the process
 * table, the checker's rules, the trace and the chart coverage counter. The seed runs
 * (`spec/sim/sim.spec.ts`) rely on each of them; here each is shown doing what
 * `docs/invariants.md` says it does.
 */
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { createActor, createMachine } from 'xstate';
import { openStateStore } from '../../actors/state/state-store.ts';
import { createBus } from '../../bus/bus.ts';
import type { Allocation, TaskEvent } from '../../model/types.ts';
import { Coverage } from '../../sim/coverage.ts';
import { HealthInvariant } from '../../sim/health.ts';
import { Checker } from '../../sim/invariants.ts';
import { generateOps, type AllocSpec } from '../../sim/ops.ts';
import { ProcessTable } from '../../sim/processes.ts';
import { Rng } from '../../sim/random.ts';
import { Scheduler } from '../../sim/scheduler.ts';
import { Trace } from '../../sim/trace.ts';
import { makeAlloc, mockTask } from '../support/fixtures.ts';

const EPOCH = 1_000_000;

/** A process table whose processes run until killed, each trapping signals or not as `traps` says. */
function table(sched: Scheduler, traps?: boolean) {
  const trace = new Trace(() => sched.now(), EPOCH);
  const t = new ProcessTable(sched, new Rng(7), trace, () => ({ exitCode: 0 }));
  return { t, trace, spawn: (alloc: string, task: string) => Object.assign(t.spawn(alloc, task, `${alloc}/${task}`), traps === undefined ? {} : { traps }) };
}

const ev = (type: string, time = 0): TaskEvent => ({ type, time, displayMessage: '', details: {} });

const alloc = (id: string, over: Partial<Allocation>): Allocation =>
  ({ id, clientStatus: 'running', allocModifyIndex: 1, taskStates: {}, ...over }) as unknown as Allocation;

describe('simulator parts', () => {
  it('the scheduler runs timers in (time, sequence) order and drains microtasks between two', async () => {
    const sched = new Scheduler(EPOCH);
    const seen: string[] = [];
    sched.at(20, () => seen.push('b@20'), 'world');
    sched.at(
      10,
      () => {
        seen.push('a@10');
        void Promise.resolve()
          .then(() => Promise.resolve())
          .then(() => seen.push('a@10 microtask'));
      },
      'world',
    );
    sched.at(20, () => seen.push('c@20'), 'world');
    expect(await sched.runUntil(EPOCH + 100)).to.equal(true);
    expect(seen).to.deep.equal(['a@10', 'a@10 microtask', 'b@20', 'c@20']);
    expect(sched.now()).to.equal(EPOCH + 100);
  });

  it("a crashed host's timers never run, nor do the ones it sets later", async () => {
    const sched = new Scheduler(EPOCH);
    const seen: string[] = [];
    sched.at(10, () => seen.push('host'), 'host-1');
    sched.at(10, () => seen.push('world'), 'world');
    expect(sched.cancelOwner('host-1')).to.equal(1);
    sched.clock('host-1').setTimeout(() => seen.push('host, later'), 5);
    await sched.runUntil(EPOCH + 100);
    expect(seen).to.deep.equal(['world']);
    expect(sched.pending('host-1')).to.equal(0);
  });

  it('the scheduler reports a livelock when its step budget runs out', async () => {
    const sched = new Scheduler(EPOCH);
    const again = () => sched.at(1, again, 'world');
    again();
    expect(await sched.runUntil(EPOCH + 1_000_000, 50)).to.equal(false);
  });

  it('a forked random stream depends on the seed and its key only, not on what other streams drew', () => {
    const draws = (r: Rng) => [r.next(), r.next(), r.next()];
    const a = new Rng(42);
    const first = draws(a.fork('proc:x'));
    const b = new Rng(42);
    draws(b.fork('proc:y'));
    draws(b);
    expect(draws(b.fork('proc:x'))).to.deep.equal(first);
    expect(draws(new Rng(43).fork('proc:x'))).to.not.deep.equal(first);
  });

  it('SIGKILL kills a process that traps every other signal; a process exists as soon as it is spawned', async () => {
    const sched = new Scheduler(EPOCH);
    const { t, trace, spawn } = table(sched, true);
    const p = spawn('a1', 'web');
    expect(t.live('a1', 'web').map((x) => x.pid)).to.deep.equal([p.pid]);
    t.signal(p.pid, 'SIGTERM', 0);
    t.signal(p.pid, 'SIGINT', 0);
    await sched.runUntil(EPOCH + 1000);
    expect(p.alive).to.equal(true);
    t.signal(p.pid, 'SIGKILL', 0);
    expect(p.alive).to.equal(false);
    expect(p.exit).to.deep.equal({ exitCode: 137, signal: 9 });
    expect(trace.text()).to.include('gets SIGTERM (ignored)');
  });

  it('the checker flags a dead broadcast beside a live process (I1) and an index that goes down (I4)', () => {
    const sched = new Scheduler(EPOCH);
    const { t, spawn } = table(sched, false);
    const c = new Checker(
      t,
      () => sched.now(),
      () => {},
    );
    spawn('a1', 'web');
    c.broadcast(alloc('a1', { allocModifyIndex: 5, taskStates: { web: { state: 'dead' } } as unknown as Allocation['taskStates'] }));
    c.broadcast(alloc('a1', { allocModifyIndex: 4 }));
    expect(c.violations.map((v) => v.invariant)).to.deep.equal(['I1', 'I4']);
  });

  it('the checker flags an event out of grammar (I6): Started before Task Setup, Killed without Killing', () => {
    const sched = new Scheduler(EPOCH);
    const c = new Checker(
      table(sched).t,
      () => sched.now(),
      () => {},
    );
    c.taskEvent('a1', 'web', ev('Received'));
    c.taskEvent('a1', 'web', ev('Started'));
    c.taskEvent('a2', 'web', ev('Received'));
    c.taskEvent('a2', 'web', ev('Killed'));
    expect(c.violations.map((v) => `${v.invariant}: ${v.message}`)).to.deep.equal([
      'I6: a1/web: Started without Task Setup before it',
      'I6: a2/web: Killed without Killing before it',
    ]);
  });

  it('the checker flags a client status unknown and a task started after an update dropped it (I7); a start already under way may finish', () => {
    const sched = new Scheduler(EPOCH);
    const { t, spawn } = table(sched);
    const c = new Checker(
      t,
      () => sched.now(),
      () => {},
    );
    c.broadcast(alloc('a1', { clientStatus: 'unknown' }));
    c.taskDropped('a1', 'web');
    spawn('a1', 'web');
    c.taskEvent('a2', 'db', ev('Received'));
    c.taskEvent('a2', 'db', ev('Task Setup'));
    c.taskDropped('a2', 'db');
    spawn('a2', 'db');
    expect(c.violations.map((v) => `${v.invariant}: ${v.message}`)).to.deep.equal([
      'I7: a1 broadcast client status unknown',
      'I7: a1/web started (pid 1000) after an update dropped it',
    ]);
  });

  it("the checker resumes a restored task's event grammar from the events its restored state holds", () => {
    const sched = new Scheduler(EPOCH);
    const c = new Checker(
      table(sched).t,
      () => sched.now(),
      () => {},
    );
    c.resumeGrammar('a1', 'web', [ev('Received'), ev('Task Setup'), ev('Started'), ev('Killing')], true);
    c.taskEvent('a1', 'web', ev('Terminated'));
    c.taskEvent('a1', 'web', ev('Killed'));
    c.resumeGrammar('a2', 'web', [ev('Received'), ev('Task Setup'), ev('Started')], true);
    c.taskEvent('a2', 'web', ev('Terminated'));
    c.taskEvent('a2', 'web', ev('Killed'));
    expect(c.violations.map((v) => `${v.invariant}: ${v.message}`)).to.deep.equal(['I6: a2/web: Killed without Killing before it']);
  });

  it("the op generator adds the stop path's ops: shutdown delays, max_run_duration on batch allocs, stopNoDelay, dropTask and reconnect", () => {
    const ops = Array.from({ length: 60 }, (_, i) => generateOps(i + 1)).flat();
    const adds = ops.flatMap((o) => (o.op === 'add' ? [o.spec] : []));
    expect(adds.some((s) => s.shutdownDelayMs !== undefined)).to.equal(true);
    expect(adds.some((s) => s.tasks.some((task) => task.shutdownDelayMs !== undefined))).to.equal(true);
    expect(adds.filter((s) => s.maxRunDurationMs !== undefined).map((s) => s.type))
      .to.include('batch')
      .and.not.include('service');
    expect(new Set(ops.map((o) => o.op))).to.include.members(['stopNoDelay', 'dropTask', 'reconnect']);
  });

  it('the checker flags an alloc reported healthy before its task ran for min_healthy_time (I8)', async () => {
    const sched = new Scheduler(EPOCH);
    const c = new Checker(
      table(sched).t,
      () => sched.now(),
      () => {},
    );
    const spec: AllocSpec = {
      type: 'service',
      tasks: [{ name: 'web', killTimeoutMs: 200, killSignal: 'SIGINT', exitCode: 0 }],
      restart: { attempts: 0, intervalMs: 60_000, delayMs: 300, mode: 'fail' },
    };
    const bus = createBus(() => sched.now());
    const subs = new HealthInvariant(
      c,
      () => sched.now(),
      () => spec,
    ).attach(bus);
    bus.publish('task.event', { allocId: 'a1', task: 'web', event: ev('Started', sched.now()) });
    await sched.runUntil(EPOCH + 9_000);
    bus.publish('alloc.health', { allocId: 'a1', healthy: true, reason: '' });
    await sched.runUntil(EPOCH + 10_000);
    bus.publish('alloc.health', { allocId: 'a1', healthy: true, reason: '' });
    subs.forEach((s) => s.unsubscribe());
    expect(c.violations.map((v) => v.invariant)).to.deep.equal(['I8']);
    expect(c.violations[0]!.message).to.include('min_healthy_time 10000');
  });

  it('the trace stamps each line with virtual time since the epoch', async () => {
    const sched = new Scheduler(EPOCH);
    const trace = new Trace(() => sched.now(), EPOCH);
    sched.at(1500, () => trace.log('hello'), 'world');
    await sched.runUntil(EPOCH + 2000);
    expect(trace.text()).to.equal('    1.500 hello\n');
  });

  it('coverage counts the transitions a run takes, eventless ones included, and lists the rest as missing', () => {
    const m = createMachine({
      id: 'm',
      initial: 'a',
      states: { a: { on: { GO: 'b', STAY: 'a' } }, b: { always: 'c' }, c: { on: { BACK: 'a' } } },
    });
    const cov = new Coverage([m]);
    expect(cov.all.map((x) => x.label).sort()).to.deep.equal(['m.a --GO--> m.b', 'm.a --STAY--> m.a', 'm.b --always--> m.c', 'm.c --BACK--> m.a']);
    const actor = createActor(m, { inspect: cov.observe }).start();
    actor.send({ type: 'GO' });
    actor.stop();
    expect(
      cov
        .missing()
        .map((x) => x.label)
        .sort(),
    ).to.deep.equal(['m.a --STAY--> m.a', 'm.c --BACK--> m.a']);
    expect(cov.table()).to.include('2/4 transitions taken (50.0 %)');
  });

  it("the state store's coalesced writes run on the virtual clock: a crash loses exactly the unwritten puts", async () => {
    const sched = new Scheduler(EPOCH);
    const db = new Database(':memory:');
    const defer = (owner: string) => (fn: () => void) => {
      const t = sched.at(0, fn, owner);
      return () => sched.cancel(t);
    };
    const s1 = openStateStore(':memory:', { db, defer: defer('host-1') });
    const written = makeAlloc([mockTask('web')]);
    const unwritten = makeAlloc([mockTask('api')]);
    s1.putAlloc(written);
    await sched.runUntil(EPOCH + 1);
    s1.putAlloc(unwritten);
    sched.cancelOwner('host-1');
    await sched.runUntil(EPOCH + 100);
    const s2 = openStateStore(':memory:', { db, defer: defer('host-2') });
    expect(s2.load().map((r) => r.alloc.id)).to.deep.equal([written.id]);
    s2.close();
    db.close();
  });
});
