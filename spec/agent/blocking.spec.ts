/**
 * The blocking-query waiter set: one index per table, one timer in all whatever the number of
 * waiters (1,000 parked queries cost one timer), each woken by a change to a table it reads or
 * at its own deadline.
 */
import { expect } from 'chai';
import { IndexWaiters } from '../../agent/state/blocking.ts';

const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('agent: blocking query waiters', () => {
  it('parks 1,000 waiters on one timer and wakes them on a change to their table', async () => {
    const w = new IndexWaiters();
    const before = timeouts();
    const idx = w.next();
    w.changed(['allocs'], idx);
    let woken = 0;
    const waits = Array.from({ length: 1000 }, (_, i) => w.wait(['allocs'], idx, Date.now() + 60_000 + i).then(() => woken++));
    const jobWait = w.wait(['jobs'], w.indexOf(['jobs']), Date.now() + 60_000);
    expect(w.waiting).to.equal(1001);
    expect(w.timers).to.equal(1);
    expect(timeouts() - before).to.equal(1);

    const next = w.next();
    w.changed(['jobs'], next); // a table they do not read
    await Promise.resolve();
    expect(woken).to.equal(0);
    await jobWait;

    w.changed(['allocs'], w.next());
    await Promise.all(waits);
    expect(woken).to.equal(1000);
    expect(w.waiting).to.equal(0);
    expect(w.timers).to.equal(0);
  });

  it('answers each waiter at its own deadline, rearming the one timer for the next', async () => {
    const w = new IndexWaiters();
    const order: string[] = [];
    const now = Date.now();
    const late = w.wait(['allocs'], 5, now + 60_000).then(() => order.push('late'));
    const early = w.wait(['allocs'], 5, now + 20).then(() => order.push('early'));
    expect(w.timers).to.equal(1);
    await early;
    // The early deadline passed; the late waiter still waits, on the one timer rearmed for it.
    expect([w.waiting, w.timers]).to.deep.equal([1, 1]);
    w.close();
    await late;
    expect(order).to.deep.equal(['early', 'late']);
    expect(w.timers).to.equal(0);
  });

  it('lets an aborted waiter go at once, and close() wakes everyone', async () => {
    const w = new IndexWaiters();
    const ac = new AbortController();
    const a = w.wait(['allocs'], 5, Date.now() + 60_000, ac.signal);
    const b = w.wait(['nodes'], 5, Date.now() + 60_000);
    ac.abort();
    await a;
    expect(w.waiting).to.equal(1);
    w.close();
    await b;
    expect(w.waiting).to.equal(0);
    expect(w.timers).to.equal(0);
  });
});
