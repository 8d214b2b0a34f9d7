import { expect } from 'chai';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from '../../../actors/client/client.ts';
import type { Client } from '../../../actors/client/types.ts';
import type { FsUsage } from '../../../machines/policy/gc.ts';
import { AllocNotEligibleForGcError, AllocNotFoundError, InvalidClientOptionError } from '../../../model/errors.ts';
import { openStateStore } from '../../../actors/state/state-store.ts';
import { HeldPeriodClock } from '../../support/held-clock.ts';
import { nextMessage, record, useTempClients } from '../../support/temp-client.ts';
import { longRunning, quickBatch, settled, terminalAllocs } from './support.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

/** A period no other delay in these specs uses. */
const PERIOD = 3_600_017;

describe('client gc', () => {
  const newClient = useTempClients();

  /** A client whose periodic gc fires on demand, with usage computed from the client itself. */
  function gcClient(opts: { usage?: (c: Client) => FsUsage; maxAllocs?: number; parallel?: number } = {}) {
    const clock = new HeldPeriodClock(PERIOD);
    const reads: FsUsage[] = [];
    const ref: { client?: Client } = {};
    const client = newClient({
      clock,
      gcIntervalMs: PERIOD,
      gcMaxAllocs: opts.maxAllocs ?? Infinity,
      ...(opts.parallel ? { gcParallelDestroys: opts.parallel } : {}),
      gcUsageReader: async () => {
        const u = opts.usage ? opts.usage(ref.client!) : { diskUsedPercent: 1, inodesUsedPercent: 1 };
        reads.push(u);
        return u;
      },
    });
    ref.client = client;
    return { client, clock, reads };
  }

  it('over the disk threshold: collects the oldest-terminal allocs, reading usage after each, until under', async () => {
    const { client, clock, reads } = gcClient({ usage: (c) => ({ diskUsedPercent: c.runners().length * 15, inodesUsedPercent: 0 }) });
    const collected = record(client, 'gc.collected');
    const live = client.addAlloc(longRunning());
    const first = nextMessage(client, 'gc.collected');
    const done = await terminalAllocs(client, 5); // 6 allocs: 90 %
    // Each alloc coming to rest terminal triggered a round: under 80 % until the fifth.
    await first;
    // 90 % -> collect the oldest -> 75 %: stop.
    expect(collected.items.map((m) => [m.allocId, m.reason])).to.deep.equal([[done[0]!.allocId, 'disk']]);
    expect(reads.map((r) => r.diskUsedPercent).slice(0, 5)).to.deep.equal([30, 45, 60, 75, 90]);
    await client.runner(live.allocId)!.waitFor('running');
    await clock.fire();
    expect(reads.at(-1)!.diskUsedPercent).to.equal(75);
    expect(client.runner(done[0]!.allocId)).to.equal(undefined);
    expect(existsSync(done[0]!.allocDir.dir)).to.equal(false);
    expect(client.runner(live.allocId)!.state()).to.equal('running');
    // Still over 80 % with less collectable: the next round takes the next oldest, never the running one.
    await clock.fire();
    expect(collected.items.map((m) => m.allocId)).to.deep.equal([done[0]!.allocId]);
  });

  it('over the inode threshold: reason inodes; under both thresholds nothing is collected', async () => {
    let inodes = 10;
    const { client, clock } = gcClient({ usage: (c) => ({ diskUsedPercent: 50, inodesUsedPercent: inodes * c.runners().length }) });
    const collected = record(client, 'gc.collected');
    const done = await terminalAllocs(client, 4);
    await clock.fire(); // 40 %: under
    expect(collected.items).to.deep.equal([]);
    inodes = 20; // 80 % -> collect one -> 60 %
    await clock.fire();
    expect(collected.items.map((m) => [m.allocId, m.reason])).to.deep.equal([[done[0]!.allocId, 'inodes']]);
    expect(client.runners().length).to.equal(3);
  });

  it('usage that cannot be read is reported, and only the count applies', async () => {
    const clock = new HeldPeriodClock(PERIOD);
    const client = newClient({
      clock,
      gcIntervalMs: PERIOD,
      gcMaxAllocs: 1,
      gcUsageReader: async () => {
        throw new Error('EIO');
      },
    });
    const errors = record(client, 'client.error');
    const collected = record(client, 'gc.collected');
    const allocs = [longRunning(), longRunning()];
    const runners = allocs.map((a) => client.addAlloc(a)); // 2 > 1, but nothing is terminal yet
    for (const r of runners) await r.waitFor('running');
    for (const [i, a] of allocs.entries()) {
      client.updateAlloc({ ...a, desiredStatus: 'stop', allocModifyIndex: 2 });
      await settled(runners[i]!);
    }
    await clock.fire();
    expect(collected.items.map((m) => [m.allocId, m.reason])).to.deep.equal([[runners[0]!.allocId, 'count']]);
    expect(client.runners()).to.deep.equal([runners[1]]);
    expect(errors.items.map((e) => e.error)).to.include(`gc: cannot read usage of ${join(client.dataDir, 'alloc')}: EIO`);
  });

  it('over gcMaxAllocs: the periodic round collects exactly enough terminal allocs, oldest first', async () => {
    const { client, clock } = gcClient({ maxAllocs: 3 });
    const collected = record(client, 'gc.collected');
    const live = client.addAlloc(longRunning());
    const allocs = [longRunning(), longRunning(), longRunning(), longRunning(), longRunning()];
    const runners = allocs.map((a) => client.addAlloc(a)); // none terminal yet: addAlloc has nothing to take
    for (const r of runners) await r.waitFor('running');
    expect(collected.items).to.deep.equal([]);
    // They stop in reverse order: the last added is the oldest terminal.
    for (let i = allocs.length - 1; i >= 0; i--) {
      client.updateAlloc({ ...allocs[i]!, desiredStatus: 'stop', allocModifyIndex: 2 });
      await settled(runners[i]!);
    }
    await clock.fire(); // 6 allocs, limit 3: the three oldest terminal go
    expect(collected.items.map((m) => m.reason)).to.deep.equal(['count', 'count', 'count']);
    expect(collected.items.map((m) => m.allocId).sort()).to.deep.equal([runners[4]!, runners[3]!, runners[2]!].map((r) => r.allocId).sort());
    expect(
      client
        .runners()
        .map((r) => r.allocId)
        .sort(),
    ).to.deep.equal([live, runners[0]!, runners[1]!].map((r) => r.allocId).sort());
    await clock.fire(); // at the limit: nothing more
    expect(collected.items).to.have.length(3);
  });

  it('an alloc coming to rest terminal triggers a round at once; addAlloc alone collects nothing (no MakeRoomFor)', async () => {
    const { client, reads } = gcClient({ maxAllocs: 2 });
    const collected = record(client, 'gc.collected');
    const runners = [longRunning(), longRunning(), longRunning()].map((a) => client.addAlloc(a));
    for (const r of runners) await r.waitFor('running');
    // Three allocs over a limit of two, none terminal: nothing to collect, and no round ran.
    expect(collected.items).to.deep.equal([]);
    expect(reads).to.have.length(0);
    const gone = new Promise<void>((resolve) => {
      const sub = client.bus.of('gc.collected').subscribe(() => {
        queueMicrotask(() => sub.unsubscribe());
        resolve();
      });
    });
    client.updateAlloc({ ...runners[1]!.alloc(), desiredStatus: 'stop', allocModifyIndex: 2 });
    await gone; // the period never fired: the alloc turning terminal triggered the round
    expect(collected.items.map((m) => [m.allocId, m.reason])).to.deep.equal([[runners[1]!.allocId, 'count']]);
    expect(client.runners().map((r) => r.allocId)).to.deep.equal([runners[0]!.allocId, runners[2]!.allocId]);
  });

  it('gc() collects every terminal alloc, at most gcParallelDestroys at once, oldest first', async () => {
    let inFlight = 0;
    let peak = 0;
    const order: string[] = [];
    // Each destroy is held until the next one starts (the last one is not held): with no limit all
    // five would be in flight at once; with a limit of 2 the second start frees the first, and so on.
    let held: (() => void) | undefined;
    const client = newClient({
      gcIntervalMs: 0,
      gcParallelDestroys: 2,
      hooks: [
        {
          name: 'held-destroy',
          destroy: async (ctx) => {
            inFlight++;
            peak = Math.max(peak, inFlight);
            order.push(ctx.alloc.id);
            held?.();
            if (order.length < 5) await new Promise<void>((r) => (held = r));
            inFlight--;
          },
        },
      ],
    });
    const collected = record(client, 'gc.collected');
    const live = client.addAlloc(longRunning());
    const done = await terminalAllocs(client, 5);
    const ids = await client.gc();
    expect(ids).to.deep.equal(done.map((r) => r.allocId));
    expect(peak).to.equal(2);
    expect(order).to.deep.equal(ids);
    expect(collected.items.map((m) => m.reason)).to.deep.equal(Array(5).fill('forced'));
    expect(client.runners().map((r) => r.allocId)).to.deep.equal([live.allocId]);
    expect(await client.gc()).to.deep.equal([]);
  });

  it("gcAlloc: AllocNotFoundError for an unknown alloc, Nomad's refusal for a live one, collects a terminal one", async () => {
    const client = newClient({ gcIntervalMs: 0 });
    const collected = record(client, 'gc.collected');
    const live = client.addAlloc(longRunning());
    await live.waitFor('running');
    const missing = '00000000-0000-4000-8000-000000000000';
    await client.gcAlloc(missing).then(
      () => expect.fail('resolved'),
      (e) => {
        expect(e).to.be.instanceOf(AllocNotFoundError);
        expect(e.message).to.equal(`unknown allocation ${missing}`);
      },
    );
    await client.gcAlloc(live.allocId).then(
      () => expect.fail('resolved'),
      (e) => {
        expect(e).to.be.instanceOf(AllocNotEligibleForGcError);
        expect(e.message).to.match(/^No such allocation on client, or allocation not eligible for GC: allocation \S+ is not terminal$/);
      },
    );
    expect(live.state()).to.equal('running');
    const [done] = await terminalAllocs(client, 1);
    await client.gcAlloc(done!.allocId);
    expect(collected.items.map((m) => [m.allocId, m.reason])).to.deep.equal([[done!.allocId, 'forced']]);
    expect(client.runner(done!.allocId)).to.equal(undefined);
    await client.gcAlloc(done!.allocId).then(
      () => expect.fail('resolved'),
      (e) => expect(e).to.be.instanceOf(AllocNotFoundError),
    );
  });

  it('a stopped alloc (desired stop, all tasks dead) is collectable too', async () => {
    const client = newClient({ gcIntervalMs: 0 });
    const alloc = longRunning();
    const r = client.addAlloc(alloc);
    await r.waitFor('running');
    client.updateAlloc({ ...alloc, desiredStatus: 'stop', allocModifyIndex: 2 });
    await settled(r);
    expect(await client.gc()).to.deep.equal([r.allocId]);
  });

  it('keeps a previous alloc while its replacement waits, collects it once the replacement has moved its data', async () => {
    const client = newClient({ gcIntervalMs: 0, gcMaxAllocs: 2 });
    const group = { ephemeralDisk: { sticky: true, migrate: true } };
    const prevAlloc = makeAlloc([mockTask('web', { run_for: '1ms' })], { jobType: 'batch', group });
    const prev = client.addAlloc(prevAlloc);
    await settled(prev);
    writeFileSync(join(prev.allocDir.sharedDir, 'data', 'state.txt'), 'kept');
    // The replacement also waits on a preempted alloc that keeps running.
    const victim = client.addAlloc(longRunning());
    await victim.waitFor('running');
    const next = client.addAlloc(
      makeAlloc([mockTask('web', { run_for: '1h' })], { group, previousAllocation: prev.allocId, preemptedAllocations: [victim.allocId] }),
    );
    await next.waitFor('waiting-prev');
    expect(next.isWaiting()).to.equal(true);
    // Three allocs over a limit of two, yet the waited-on alloc stays.
    expect(client.runner(prev.allocId)).to.not.equal(undefined);
    expect(await client.gc()).to.deep.equal([]);
    await client.gcAlloc(prev.allocId).then(
      () => expect.fail('resolved'),
      (e) => {
        expect(e).to.be.instanceOf(AllocNotEligibleForGcError);
        expect(e.message).to.contain('still waited on by a replacement');
      },
    );
    client.updateAlloc({ ...victim.alloc(), desiredStatus: 'evict', allocModifyIndex: 5 });
    await next.waitFor('running');
    expect(existsSync(join(next.allocDir.sharedDir, 'data', 'state.txt'))).to.equal(true);
    await settled(victim);
    expect((await client.gc()).sort()).to.deep.equal([prev.allocId, victim.allocId].sort());
  });

  it('keeps a preempted alloc that has ended while its preemptor still waits on another; collects both once it runs', async () => {
    const client = newClient({ gcIntervalMs: 0 });
    const first = client.addAlloc(longRunning());
    const second = client.addAlloc(longRunning());
    await Promise.all([first.waitFor('running'), second.waitFor('running')]);
    const preemptor = client.addAlloc(makeAlloc([mockTask('web', { run_for: '1h' })], { preemptedAllocations: [first.allocId, second.allocId] }));
    await preemptor.waitFor('waiting-prev');
    client.updateAlloc({ ...first.alloc(), desiredStatus: 'evict', allocModifyIndex: 5 });
    await settled(first);
    // the first victim is terminal, but the preemptor still waits (on the second): it is held
    expect(preemptor.isWaiting()).to.equal(true);
    expect(await client.gc()).to.deep.equal([]);
    expect(client.runner(first.allocId)).to.not.equal(undefined);
    client.updateAlloc({ ...second.alloc(), desiredStatus: 'evict', allocModifyIndex: 5 });
    await preemptor.waitFor('running');
    await settled(second);
    expect((await client.gc()).sort()).to.deep.equal([first.allocId, second.allocId].sort());
  });

  it('keeps an alloc whose snapshot is being served until the copy is done', async function () {
    const client = newClient({ gcIntervalMs: 0 });
    const [done] = await terminalAllocs(client, 1);
    // Big enough that an unread response stalls the tar stream on backpressure.
    mkdirSync(join(done!.allocDir.sharedDir, 'data'), { recursive: true });
    writeFileSync(join(done!.allocDir.sharedDir, 'data', 'blob'), Buffer.alloc(16 << 20, 7));
    const srv = await client.serveSnapshots();
    try {
      const res = await fetch(`${srv.url}/v1/client/allocation/${done!.allocId}/snapshot`);
      expect(res.status).to.equal(200);
      expect(await client.gc()).to.deep.equal([]);
      await client.gcAlloc(done!.allocId).then(
        () => expect.fail('resolved'),
        (e) => expect(e).to.be.instanceOf(AllocNotEligibleForGcError),
      );
      await res.arrayBuffer(); // the copy completes
      for (let i = 0; i < 50 && client.runner(done!.allocId) && (await client.gc()).length === 0; i++) await new Promise((r) => setImmediate(r));
      expect(client.runner(done!.allocId)).to.equal(undefined);
    } finally {
      await srv.close();
    }
  });

  it('drops a collected alloc from the state store: a restore never brings it back', async () => {
    const first = newClient({ gcIntervalMs: 0 });
    const [gone, kept] = await terminalAllocs(first, 2);
    await first.gcAlloc(gone!.allocId);
    // Durable at once: read the store the way a crashed host's successor would.
    const store = openStateStore(join(first.dataDir, 'client', 'state.db'));
    try {
      expect(store.load().map((s) => s.alloc.id)).to.deep.equal([kept!.allocId]);
    } finally {
      store.close();
    }
    await first.shutdown();
    const second = createClient({ dataDir: first.dataDir, gcIntervalMs: 0 });
    try {
      const restored = await second.restore();
      expect(restored.map((r) => r.allocId)).to.deep.equal([kept!.allocId]);
      expect(existsSync(gone!.allocDir.dir)).to.equal(false);
      // The restored terminal alloc is collectable in the new client's life.
      await settled(restored[0]!);
      expect(await second.gc()).to.deep.equal([kept!.allocId]);
      expect((await second.restore()).length).to.equal(0);
    } finally {
      await second.shutdown();
    }
    const third = createClient({ dataDir: first.dataDir, gcIntervalMs: 0 });
    try {
      expect(await third.restore()).to.deep.equal([]);
    } finally {
      await third.shutdown();
    }
  });

  it('gcIntervalMs 0 schedules nothing; shutdown clears the timer and refuses later calls', async () => {
    const off = new HeldPeriodClock(PERIOD);
    newClient({ clock: off, gcIntervalMs: 0 });
    expect(off.scheduledHeld).to.equal(0);
    const on = new HeldPeriodClock(PERIOD);
    const client = newClient({ clock: on, gcIntervalMs: PERIOD });
    expect(on.pending).to.equal(1);
    await client.shutdown();
    expect(on.pending).to.equal(0);
    await client.gc().then(
      () => expect.fail('resolved'),
      (e) => expect(e.name).to.equal('ClientShutdownError'),
    );
  });

  it('rejects bad gc options with InvalidClientOptionError before touching the disk', () => {
    const bad: Array<[string, Record<string, unknown>]> = [
      ['gcIntervalMs', { gcIntervalMs: -1 }],
      ['gcDiskUsageThreshold', { gcDiskUsageThreshold: 101 }],
      ['gcInodeUsageThreshold', { gcInodeUsageThreshold: -5 }],
      ['gcMaxAllocs', { gcMaxAllocs: 1.5 }],
      ['gcParallelDestroys', { gcParallelDestroys: 0 }],
    ];
    for (const [name, opts] of bad) {
      const dir = join(process.env.TMPDIR ?? '/tmp', `berth-gc-bad-${process.pid}-${name}`);
      expect(() => createClient({ dataDir: dir, ...opts })).to.throw(InvalidClientOptionError, `options.${name}`);
      expect(existsSync(dir)).to.equal(false);
    }
  });

  it('a trigger during a round runs one more round, once; gcIntervalMs 0 turns the triggered rounds off too', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let firstRead!: () => void;
    const reading = new Promise<void>((resolve) => (firstRead = resolve));
    let secondRead!: () => void;
    const again = new Promise<void>((resolve) => (secondRead = resolve));
    let reads = 0;
    const client = newClient({
      clock: new HeldPeriodClock(PERIOD),
      gcIntervalMs: PERIOD,
      gcUsageReader: async () => {
        reads++;
        if (reads === 1) {
          firstRead();
          await held;
        }
        if (reads === 2) secondRead();
        return { diskUsedPercent: 1, inodesUsedPercent: 1 };
      },
    });
    await settled(client.addAlloc(quickBatch()));
    await reading; // the first alloc at rest started a round, held in its read
    await terminalAllocs(client, 2); // two more triggers while it runs
    expect(reads).to.equal(1);
    release();
    await again;
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(reads).to.equal(2);
    let offReads = 0;
    const off = newClient({
      gcIntervalMs: 0,
      gcMaxAllocs: 1,
      gcUsageReader: async () => (offReads++, { diskUsedPercent: 99, inodesUsedPercent: 99 }),
    });
    const done = await terminalAllocs(off, 2);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect([offReads, off.runners().length]).to.deep.equal([0, 2]);
    expect((await off.gc()).sort()).to.deep.equal(done.map((r) => r.allocId).sort());
  });

  it('quickBatch completes (fixture check)', async () => {
    const client = newClient({ gcIntervalMs: 0 });
    const r = client.addAlloc(quickBatch());
    await settled(r);
    expect(r.alloc().clientStatus).to.equal('complete');
  });
});
