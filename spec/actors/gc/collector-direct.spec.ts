/**
 * The garbage collector on its own, across its host boundary: a real bus, a clock whose timers
 * the test fires, and hosts whose runners are plain records (the client is proved in
 * collector.spec.ts). What a user sees: which allocs are destroyed, in what order, with which
 * `gc.collected` reason, what is refused, and when rounds run.
 */
import { expect } from 'chai';
import { createBus, type Bus } from '../../../bus/bus.ts';
import { AllocGarbageCollector, type GcHost } from '../../../actors/gc/collector.ts';
import type { AllocRunner } from '../../../actors/runner/api.ts';
import type { FsUsage } from '../../../machines/policy/gc.ts';
import type { AllocState } from '../../../model/alloc-state.ts';
import type { Clock } from '../../../model/clock.ts';
import { AllocNotEligibleForGcError, AllocNotFoundError } from '../../../model/errors.ts';
import type { Allocation } from '../../../model/types.ts';

/** A timer of {@link TestClock}: fired by the test; `unrefs` counts unref calls. */
interface Timer {
  fn: () => void;
  ms: number;
  unrefs: number;
  unref(): void;
}

/** A clock whose timers wait for the test. */
class TestClock implements Clock {
  readonly timers: Timer[] = [];
  cleared: unknown[] = [];
  #now = 1_000;
  now(): number {
    return ++this.#now;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const t: Timer = { fn, ms, unrefs: 0, unref: () => void t.unrefs++ };
    this.timers.push(t);
    return t;
  }
  clearTimeout(handle: unknown): void {
    this.cleared.push(handle);
  }
}

/** A runner as the collector sees it: a view, a state, a destroy. */
class FakeRunner {
  destroyed = false;
  destroys = 0;
  /** When set, destroy waits on it; `fail` makes it reject. */
  hold: Promise<void> | undefined;
  fail = false;
  constructor(
    readonly allocId: string,
    public view: Allocation,
    public st: AllocState = 'stopping',
  ) {}
  state(): AllocState {
    return this.st;
  }
  alloc(): Allocation {
    return this.view;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  async destroy(): Promise<void> {
    this.destroys++;
    await this.hold;
    if (this.fail) throw new Error('destroy failed');
    this.destroyed = true;
  }
}

/** A terminal view (complete, its task dead at `finishedAt`), or a running one. */
function view(id: string, opts: { finishedAt?: number; running?: boolean; previous?: string; preempted?: string[] } = {}): Allocation {
  return {
    id,
    clientStatus: opts.running ? 'running' : 'complete',
    desiredStatus: 'run',
    ...(opts.previous ? { previousAllocation: opts.previous } : {}),
    ...(opts.preempted ? { preemptedAllocations: opts.preempted } : {}),
    taskStates: { web: { state: opts.running ? 'running' : 'dead', ...(opts.finishedAt !== undefined ? { finishedAt: opts.finishedAt } : {}) } },
  } as unknown as Allocation;
}

interface Setup {
  bus: Bus;
  clock: TestClock;
  gc: AllocGarbageCollector;
  runners: Map<string, FakeRunner>;
  reads: number;
  flushes: number;
  copying: Set<string>;
  collected: Array<[string, string]>;
  errors: string[];
  add(r: FakeRunner, announce?: boolean): FakeRunner;
  state(id: string, to: AllocState): void;
}

function setup(
  opts: { usage?: () => FsUsage | Promise<FsUsage>; maxAllocs?: number; intervalMs?: number; parallel?: number; count?: () => number } = {},
): Setup {
  const bus = createBus();
  const clock = new TestClock();
  const runners = new Map<string, FakeRunner>();
  const copying = new Set<string>();
  const s = { reads: 0, flushes: 0 } as Setup;
  const host: GcHost = {
    runner: (id) => runners.get(id) as unknown as AllocRunner | undefined,
    count: opts.count ?? (() => [...runners.values()].filter((r) => !r.destroyed).length),
    isCopyingOut: (id) => copying.has(id),
    flush: () => void s.flushes++,
  };
  const collected: Array<[string, string]> = [];
  const errors: string[] = [];
  bus.of('gc.collected').subscribe((m) => collected.push([m.allocId, m.reason]));
  bus.of('client.error').subscribe((m) => errors.push(`${m.actorId}: ${m.error}`));
  const gc = new AllocGarbageCollector({
    bus,
    clock,
    allocDir: '/data/alloc',
    thresholds: { diskUsageThreshold: 80, inodeUsageThreshold: 70, maxAllocs: opts.maxAllocs ?? Infinity },
    intervalMs: opts.intervalMs ?? 0,
    parallelDestroys: opts.parallel ?? 2,
    readUsage: async () => {
      s.reads++;
      return (opts.usage ?? (() => ({ diskUsedPercent: 1, inodesUsedPercent: 1 })))();
    },
    host,
  });
  return Object.assign(s, {
    bus,
    clock,
    gc,
    runners,
    copying,
    collected,
    errors,
    add(r: FakeRunner, announce = true) {
      runners.set(r.allocId, r);
      gc.added(r as unknown as AllocRunner);
      if (announce && r.st === 'stopping') bus.publish('alloc.state', { allocId: r.allocId, from: 'running', to: 'stopping' });
      return r;
    },
    state(id: string, to: AllocState) {
      bus.publish('alloc.state', { allocId: id, from: null, to });
    },
  });
}

/** Lets queued promise callbacks run (the collector's work is all promise chains, no timers). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('garbage collector (direct: real bus, test clock, plain runners)', () => {
  it('collectAll destroys the collectable allocs oldest-terminal first, returns their ids and flushes once', async () => {
    const s = setup();
    s.add(new FakeRunner('b', view('b', { finishedAt: 20 })));
    s.add(new FakeRunner('a', view('a', { finishedAt: 10 })));
    s.add(new FakeRunner('live', view('live', { running: true }), 'running'));
    // Terminal, but never seen stopping on the bus: not a candidate.
    s.add(new FakeRunner('unseen', view('unseen', { finishedAt: 1 })), false);
    expect(await s.gc.collectAll()).to.deep.equal(['a', 'b']);
    expect(s.collected).to.deep.equal([
      ['a', 'forced'],
      ['b', 'forced'],
    ]);
    expect(s.flushes).to.equal(1);
    expect(s.runners.get('live')!.destroys).to.equal(0);
    expect(s.runners.get('unseen')!.destroys).to.equal(0);
    expect(await s.gc.collectAll()).to.deep.equal([]);
  });

  it('an alloc seen stopping but not settled yet, or announced destroyed, is not collected', async () => {
    const s = setup();
    const r = s.add(new FakeRunner('a', view('a', { finishedAt: 1 })));
    r.st = 'running'; // left stopping again (a restart): not settled
    expect(await s.gc.collectAll()).to.deep.equal([]);
    r.st = 'stopping';
    s.state('a', 'destroyed');
    expect(await s.gc.collectAll()).to.deep.equal([]);
    expect(r.destroys).to.equal(0);
    // Seen stopping again later: a candidate again.
    s.state('a', 'stopping');
    expect(await s.gc.collectAll()).to.deep.equal(['a']);
  });

  it('a candidate whose runner went away or was destroyed elsewhere is dropped', async () => {
    const s = setup();
    s.add(new FakeRunner('a', view('a', { finishedAt: 1 })));
    const b = s.add(new FakeRunner('b', view('b', { finishedAt: 2 })));
    s.runners.delete('a');
    b.destroyed = true;
    expect(await s.gc.collectAll()).to.deep.equal([]);
    expect(b.destroys).to.equal(0);
  });

  it('a destroy that fails is not counted as collected, and the alloc stays a candidate', async () => {
    const s = setup();
    const a = s.add(new FakeRunner('a', view('a', { finishedAt: 1 })));
    a.fail = true;
    expect(await s.gc.collectAll()).to.deep.equal([]);
    expect(s.collected).to.deep.equal([]);
    expect(s.gc.collecting).to.equal(0);
    a.fail = false;
    expect(await s.gc.collectAll()).to.deep.equal(['a']);
  });

  it('collect: unknown or destroyed is AllocNotFoundError; live or in use is refused; a terminal one is destroyed and flushed', async () => {
    const s = setup();
    await s.gc.collect('nope').then(
      () => expect.fail('resolved'),
      (e) => expect(e).to.be.instanceOf(AllocNotFoundError),
    );
    const gone = s.add(new FakeRunner('gone', view('gone', { finishedAt: 1 })));
    gone.destroyed = true;
    await s.gc.collect('gone').then(
      () => expect.fail('resolved'),
      (e) => expect(e).to.be.instanceOf(AllocNotFoundError),
    );
    s.add(new FakeRunner('live', view('live', { running: true }), 'running'));
    await s.gc.collect('live').then(
      () => expect.fail('resolved'),
      (e) => {
        expect(e).to.be.instanceOf(AllocNotEligibleForGcError);
        expect((e as AllocNotEligibleForGcError).why).to.equal('not-terminal');
      },
    );
    s.add(new FakeRunner('copied', view('copied', { finishedAt: 1 })));
    s.copying.add('copied');
    await s.gc.collect('copied').then(
      () => expect.fail('resolved'),
      (e) => expect((e as AllocNotEligibleForGcError).why).to.equal('in-use'),
    );
    // Forced collection takes a terminal alloc even unannounced and unsettled.
    const done = s.add(new FakeRunner('done', view('done', { finishedAt: 1 }), 'running'), false);
    await s.gc.collect('done');
    expect(done.destroyed).to.equal(true);
    expect(s.collected).to.deep.equal([['done', 'forced']]);
    expect(s.flushes).to.equal(1);
  });

  it('a second collect of an alloc being collected waits on the first: one destroy', async () => {
    const s = setup();
    const a = s.add(new FakeRunner('a', view('a', { finishedAt: 1 })));
    let release!: () => void;
    a.hold = new Promise<void>((r) => (release = r));
    const first = s.gc.collect('a');
    await settle();
    expect(s.gc.collecting).to.equal(1);
    let secondDone = false;
    const second = s.gc.collect('a').then(() => (secondDone = true));
    // Nor does collectAll start another.
    const all = s.gc.collectAll();
    await settle();
    expect(secondDone).to.equal(false);
    release();
    await Promise.all([first, second]);
    expect(await all).to.deep.equal([]);
    expect(a.destroys).to.equal(1);
    expect(s.collected).to.deep.equal([['a', 'forced']]);
    expect(s.gc.collecting).to.equal(0);
  });

  it('destroys at most parallelDestroys at once', async () => {
    const s = setup({ parallel: 2 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const rs = ['a', 'b', 'c'].map((id, i) => {
      const r = s.add(new FakeRunner(id, view(id, { finishedAt: i })));
      r.hold = gate;
      return r;
    });
    const all = s.gc.collectAll();
    await settle();
    expect(rs.map((r) => r.destroys)).to.deep.equal([1, 1, 0]);
    release();
    expect(await all).to.deep.equal(['a', 'b', 'c']);
  });

  it('a round over the disk threshold collects one alloc per read, oldest first, until under', async () => {
    const s = setup({ usage: () => ({ diskUsedPercent: 50 + 15 * [...s.runners.values()].filter((r) => !r.destroyed).length, inodesUsedPercent: 0 }) });
    for (const [id, at] of [
      ['c', 3],
      ['a', 1],
      ['b', 2],
    ] as const)
      s.add(new FakeRunner(id, view(id, { finishedAt: at })));
    // 95 % -> a -> 80 % (not over) -> stop.
    await s.gc.keepUsageBelowThreshold();
    expect(s.collected).to.deep.equal([['a', 'disk']]);
    expect(s.reads).to.equal(2);
    expect(s.flushes).to.equal(1);
  });

  it('a round over the inode threshold says inodes; one over the count takes just enough', async () => {
    const inodes = setup({ usage: () => ({ diskUsedPercent: 0, inodesUsedPercent: 71 }) });
    inodes.add(new FakeRunner('a', view('a', { finishedAt: 1 })));
    await inodes.gc.keepUsageBelowThreshold();
    expect(inodes.collected).to.deep.equal([['a', 'inodes']]);
    const count = setup({ maxAllocs: 2 });
    for (const id of ['a', 'b', 'c', 'd']) count.add(new FakeRunner(id, view(id, { finishedAt: id.charCodeAt(0) })));
    await count.gc.keepUsageBelowThreshold();
    expect(count.collected).to.deep.equal([
      ['a', 'count'],
      ['b', 'count'],
    ]);
  });

  it('under every threshold a round reads once and collects nothing; over with nothing collectable it stops too', async () => {
    const under = setup();
    under.add(new FakeRunner('a', view('a', { finishedAt: 1 })));
    await under.gc.keepUsageBelowThreshold();
    expect([under.reads, under.collected.length]).to.deep.equal([1, 0]);
    const full = setup({ usage: () => ({ diskUsedPercent: 99, inodesUsedPercent: 0 }) });
    full.add(new FakeRunner('live', view('live', { running: true }), 'running'));
    await full.gc.keepUsageBelowThreshold();
    expect([full.reads, full.collected.length, full.flushes]).to.deep.equal([1, 0, 0]);
  });

  it('over a threshold with every destroy failing, the round ends instead of trying forever', async () => {
    const s = setup({ usage: () => ({ diskUsedPercent: 99, inodesUsedPercent: 0 }) });
    s.add(new FakeRunner('a', view('a', { finishedAt: 1 }))).fail = true;
    await s.gc.keepUsageBelowThreshold();
    expect(s.reads).to.equal(1);
    expect(s.collected).to.deep.equal([]);
  });

  it('usage that cannot be read is reported on the bus, and the count still applies', async () => {
    const s = setup({
      maxAllocs: 1,
      usage: () => {
        throw new Error('EIO');
      },
    });
    s.add(new FakeRunner('a', view('a', { finishedAt: 1 })));
    s.add(new FakeRunner('b', view('b', { finishedAt: 2 })));
    await s.gc.keepUsageBelowThreshold();
    expect(s.errors).to.deep.equal(['gc: gc: cannot read usage of /data/alloc: EIO', 'gc: gc: cannot read usage of /data/alloc: EIO']);
    expect(s.collected).to.deep.equal([['a', 'count']]);
  });

  it('a stop while usage is being read ends the round before it collects', async () => {
    let stopNow!: () => void;
    const s = setup({
      usage: () =>
        new Promise<FsUsage>((resolve) => {
          stopNow = () => {
            s.gc.stop();
            resolve({ diskUsedPercent: 99, inodesUsedPercent: 0 });
          };
        }),
    });
    const a = s.add(new FakeRunner('a', view('a', { finishedAt: 1 })));
    const round = s.gc.keepUsageBelowThreshold();
    await settle();
    stopNow();
    await round;
    expect(a.destroys).to.equal(0);
    expect(s.flushes).to.equal(0);
    // Stopped: a round does nothing, nor does a forced collection destroy.
    await s.gc.keepUsageBelowThreshold();
    expect(s.reads).to.equal(1);
    expect(await s.gc.collectAll()).to.deep.equal([]);
    expect(a.destroys).to.equal(0);
  });

  it('the period: a timer of intervalMs, unref’d, whose round runs and then schedules the next; stop clears it', async () => {
    const s = setup({ intervalMs: 5000 });
    expect(s.clock.timers.map((t) => [t.ms, t.unrefs])).to.deep.equal([[5000, 1]]);
    s.clock.timers[0]!.fn();
    expect(s.gc.round).to.not.equal(undefined);
    await s.gc.round;
    await settle();
    expect(s.reads).to.equal(1);
    expect(s.gc.round).to.equal(undefined);
    expect(s.clock.timers.map((t) => t.ms)).to.deep.equal([5000, 5000]);
    s.gc.stop();
    expect(s.clock.cleared).to.deep.equal([s.clock.timers[1]]);
    s.gc.stop();
    expect(s.clock.cleared).to.have.length(1);
    // Stopped: neither a trigger nor the bus starts a round.
    s.gc.trigger();
    s.add(new FakeRunner('a', view('a', { finishedAt: 1 })));
    await settle();
    expect(s.reads).to.equal(1);
  });

  it('intervalMs 0: no timer, and an alloc coming to rest starts no round', async () => {
    const s = setup({ intervalMs: 0 });
    expect(s.clock.timers).to.deep.equal([]);
    s.add(new FakeRunner('a', view('a', { finishedAt: 1 })));
    await settle();
    expect(s.reads).to.equal(0);
    s.gc.stop();
    expect(s.clock.cleared).to.deep.equal([]);
  });

  it('an alloc coming to rest terminal starts a round; a trigger during a round runs exactly one more after it', async () => {
    let release!: () => void;
    let gate: Promise<void> = new Promise<void>((r) => (release = r));
    const s = setup({
      intervalMs: 5000,
      usage: async () => {
        await gate;
        return { diskUsedPercent: 1, inodesUsedPercent: 1 };
      },
    });
    s.add(new FakeRunner('a', view('a', { finishedAt: 1 })));
    await settle();
    expect(s.reads).to.equal(1);
    s.gc.trigger();
    s.gc.trigger();
    const first = release;
    gate = new Promise<void>((r) => (release = r));
    first();
    await settle();
    expect(s.reads).to.equal(2);
    release();
    await settle();
    expect(s.reads).to.equal(2);
    expect(s.gc.round).to.equal(undefined);
  });

  it('keeps what a waiting replacement or preemptor names, until it stops waiting', async () => {
    const s = setup();
    s.add(new FakeRunner('prev', view('prev', { finishedAt: 1 })));
    s.add(new FakeRunner('victim', view('victim', { finishedAt: 2 })));
    s.add(new FakeRunner('next', view('next', { running: true, previous: 'prev', preempted: ['victim'] }), 'waiting-prev'));
    s.add(new FakeRunner('other', view('other', { running: true, previous: 'prev' }), 'pending'));
    expect(await s.gc.collectAll()).to.deep.equal([]);
    await s.gc.collect('prev').then(
      () => expect.fail('resolved'),
      (e) => expect((e as AllocNotEligibleForGcError).why).to.equal('in-use'),
    );
    // Still waiting (a move from pending to waiting-prev) holds on.
    s.state('next', 'waiting-prev');
    expect(await s.gc.collectAll()).to.deep.equal([]);
    s.state('next', 'running');
    // victim was only next's; prev is still other's.
    expect(await s.gc.collectAll()).to.deep.equal(['victim']);
    s.state('other', 'running');
    expect(await s.gc.collectAll()).to.deep.equal(['prev']);
  });

  it('two waiters on one alloc: it stays held until the last of them stops waiting, whichever goes first', async () => {
    const s = setup();
    s.add(new FakeRunner('prev', view('prev', { finishedAt: 1 })));
    s.add(new FakeRunner('first', view('first', { running: true, previous: 'prev' }), 'waiting-prev'));
    s.add(new FakeRunner('second', view('second', { running: true, preempted: ['prev'] }), 'pending'));
    s.state('second', 'running');
    expect(await s.gc.collectAll()).to.deep.equal([]);
    s.state('first', 'running');
    expect(await s.gc.collectAll()).to.deep.equal(['prev']);
  });

  it('a waiter naming one alloc as both previous and preempted releases it once', async () => {
    const s = setup();
    s.add(new FakeRunner('prev', view('prev', { finishedAt: 1 })));
    s.add(new FakeRunner('next', view('next', { running: true, previous: 'prev', preempted: ['prev'] }), 'waiting-prev'));
    expect(await s.gc.collectAll()).to.deep.equal([]);
    s.state('next', 'running');
    expect(await s.gc.collectAll()).to.deep.equal(['prev']);
  });

  it('a round goes on after a step that collected some and failed others, and ends when a step collects none', async () => {
    const s = setup({ maxAllocs: 1 });
    s.add(new FakeRunner('a', view('a', { finishedAt: 1 }))).fail = true;
    s.add(new FakeRunner('b', view('b', { finishedAt: 2 })));
    s.add(new FakeRunner('c', view('c', { finishedAt: 3 })));
    // 3 over 1: a (fails) and b; then 2 over 1: a again (fails): done.
    await s.gc.keepUsageBelowThreshold();
    expect(s.collected).to.deep.equal([['b', 'count']]);
    expect(s.reads).to.equal(2);
    expect(s.runners.get('a')!.destroys).to.equal(2);
  });

  it('a replacement added after it stopped waiting holds nothing', async () => {
    const s = setup();
    s.add(new FakeRunner('prev', view('prev', { finishedAt: 1 })));
    s.add(new FakeRunner('next', view('next', { running: true, previous: 'prev' }), 'running'));
    expect(await s.gc.collectAll()).to.deep.equal(['prev']);
  });

  it('once stopped, added() records nothing and the bus is no longer heard', async () => {
    const s = setup();
    s.gc.stop();
    s.add(new FakeRunner('a', view('a', { finishedAt: 1 })));
    expect(await s.gc.collectAll()).to.deep.equal([]);
  });
});
