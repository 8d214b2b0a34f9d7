/**
 * The blocking-query waiter set: one index per table, one timer in all whatever the number of
 * waiters (1,000 parked queries cost one timer), each woken by a change to a table it reads or
 * at its own deadline.
 */
import { expect } from 'chai';
import { EventEmitter, getEventListeners } from 'node:events';
import { request, type ClientRequest } from 'node:http';
import { startAgent, type Agent } from '../../agent/agent.ts';
import { resolveAgentConfig } from '../../agent/config/config.ts';
import { IndexWaiters, type GoneWatch } from '../../agent/state/blocking.ts';

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

  it('starts at index 1 at least, and a seed only ever raises a table (and the index) without waking anyone', async () => {
    expect(new IndexWaiters(0).index).to.equal(1);
    expect(new IndexWaiters().indexOf([]), 'no table: 1, as Nomad never answers 0').to.equal(1);
    const w = new IndexWaiters(5);
    expect([w.index, w.indexOf(['jobs'])]).to.deep.equal([5, 1]);
    const parked = w.wait(['jobs'], 1, Date.now() + 60_000);
    w.seed('jobs', 9);
    w.seed('jobs', 3);
    expect([w.index, w.indexOf(['jobs']), w.indexOf(['jobs', 'allocs']), w.waiting]).to.deep.equal([9, 9, 9, 1]);
    expect(w.next()).to.equal(10);
    w.close();
    await parked;
  });

  it('answers at once, parking nothing, a query already behind, past its deadline, or already aborted', async () => {
    const w = new IndexWaiters();
    w.changed(['allocs'], w.next());
    const ac = new AbortController();
    ac.abort();
    await w.wait(['allocs'], 1, Date.now() + 60_000);
    await w.wait(['allocs'], 2, Date.now() - 1);
    await w.wait(['allocs'], 2, Date.now() + 60_000, ac.signal);
    expect([w.waiting, w.timers]).to.deep.equal([0, 0]);
  });

  it('a change to a table a waiter reads, at an index not past the one it waits on, leaves it parked; changed() defaults to the current index', async () => {
    const w = new IndexWaiters(10);
    let woken = false;
    const parked = w.wait(['allocs', 'jobs'], 10, Date.now() + 60_000).then(() => (woken = true));
    w.changed(['allocs'], 7);
    await Promise.resolve();
    expect([woken, w.waiting]).to.deep.equal([false, 1]);
    w.next();
    w.changed(['jobs']);
    await parked;
    expect(w.indexOf(['jobs'])).to.equal(11);
  });

  it('a later deadline keeps the timer armed for the earlier one, and one timer is left when it is rearmed', async () => {
    const w = new IndexWaiters();
    const before = timeouts();
    const early = w.wait(['allocs'], 5, Date.now() + 20);
    const late = w.wait(['allocs'], 5, Date.now() + 60_000);
    const earlier = w.wait(['nodes'], 5, Date.now() + 10);
    expect(timeouts() - before).to.equal(1);
    await Promise.all([early, earlier]);
    expect([w.waiting, w.timers]).to.deep.equal([1, 1]);
    w.close();
    await late;
    expect(w.timers).to.equal(0);
  });

  it("a waiter woken by a change leaves the others' deadline timer armed, and stops listening to its signal", async () => {
    const w = new IndexWaiters();
    const ac = new AbortController();
    const woken = w.wait(['allocs'], 5, Date.now() + 60_000, ac.signal);
    const timed = w.wait(['nodes'], 5, Date.now() + 20);
    expect(getEventListeners(ac.signal, 'abort')).to.have.length(1);
    w.changed(['allocs'], 6);
    await woken;
    expect([w.waiting, w.timers]).to.deep.equal([1, 1]);
    expect(getEventListeners(ac.signal, 'abort')).to.have.length(0);
    await timed;
    expect([w.waiting, w.timers]).to.deep.equal([0, 0]);
  });
});

describe('agent: blocking queries over HTTP, without an AbortSignal per parked query', function () {
  this.timeout(60_000);
  let agent: Agent;
  before(async () => {
    agent = await startAgent(resolveAgentConfig([], { dev: true, port: 0 }), { log: () => {} });
  });
  after(() => agent?.close());

  /** Resolves when the agent's waiter set holds `n` readers (checked after each macrotask). */
  async function waiting(n: number): Promise<void> {
    for (let i = 0; agent.core.state.waiters.waiting !== n; i++) {
      if (i > 10_000) throw new Error(`waiters: ${agent.core.state.waiters.waiting}, expected ${n}`);
      await new Promise((r) => setImmediate(r));
    }
  }

  function park(index: number): { req: ClientRequest; answer: Promise<{ status: number; index: number }> } {
    let req!: ClientRequest;
    const answer = new Promise<{ status: number; index: number }>((resolve, reject) => {
      req = request(`${agent.url}/v1/allocations?index=${index}&wait=5m`, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, index: Number(res.headers['x-nomad-index']) }));
      });
      req.on('error', reject);
      req.end();
    });
    return { req, answer };
  }

  it('lets a parked query go when its client hangs up, and answers the others on a change', async () => {
    const { state } = agent.core;
    const at = state.waiters.indexOf(['allocs']);
    const gone = park(at);
    const stays = park(at);
    await waiting(2);
    const hungUp = new Promise<void>((r) => gone.req.on('error', () => r()));
    gone.req.destroy();
    await hungUp;
    await waiting(1);
    expect(state.waiters.timers).to.equal(1);
    // One alloc changes: the query left parked is answered past the index it waited on.
    state.waiters.changed(['allocs'], state.waiters.next());
    const a = await stays.answer;
    expect(a.status).to.equal(200);
    expect(a.index).to.be.greaterThan(at);
    expect([state.waiters.waiting, state.waiters.timers]).to.deep.equal([0, 0]);
  });
});

describe('agent: a waiter told of its reader leaving by a watch function', () => {
  const watch =
    (e: EventEmitter): GoneWatch =>
    (gone) => {
      e.once('close', gone);
      return () => e.off('close', gone);
    };

  it('is released when the reader leaves and stops listening when woken', async () => {
    const w = new IndexWaiters();
    const leaves = new EventEmitter();
    const stays = new EventEmitter();
    const a = w.wait(['allocs'], 5, Date.now() + 60_000, watch(leaves));
    const b = w.wait(['allocs'], 5, Date.now() + 60_000, watch(stays));
    expect(w.waiting).to.equal(2);
    leaves.emit('close');
    await a;
    expect(w.waiting).to.equal(1);
    w.changed(['allocs'], 10);
    await b;
    expect([w.waiting, w.timers, stays.listenerCount('close'), leaves.listenerCount('close')]).to.deep.equal([0, 0, 0, 0]);
  });

  it('does not park a reader the watch says has already gone', async () => {
    const w = new IndexWaiters();
    await w.wait(['allocs'], 5, Date.now() + 60_000, (gone) => {
      gone();
      return () => {};
    });
    expect([w.waiting, w.timers]).to.deep.equal([0, 0]);
  });
});

describe('agent: blocking query waiters at their edges', () => {
  it('a change to exactly the index a waiter read leaves it parked', async () => {
    const w = new IndexWaiters(10);
    let woken = false;
    const parked = w.wait(['allocs'], 10, Date.now() + 60_000).then(() => (woken = true));
    w.changed(['allocs'], 10);
    await new Promise((r) => setImmediate(r));
    expect([woken, w.waiting]).to.deep.equal([false, 1]);
    w.close();
    await parked;
  });

  it('a query past its deadline is answered without being parked', async () => {
    const w = new IndexWaiters();
    const answered = w.wait(['allocs'], 5, Date.now() - 1);
    expect([w.waiting, w.timers]).to.deep.equal([0, 0]);
    await answered;
  });

  it('a waiter with a later deadline leaves the earlier one’s answer on time', async () => {
    const w = new IndexWaiters();
    const start = Date.now();
    const early = w.wait(['allocs'], 5, start + 20);
    const late = w.wait(['allocs'], 5, start + 60_000);
    // Were the one timer re-armed for the later deadline, the early waiter would wait a minute.
    let fallback: NodeJS.Timeout | undefined;
    const onTime = await Promise.race([early.then(() => true), new Promise<boolean>((r) => (fallback = setTimeout(() => r(false), 500)))]);
    clearTimeout(fallback);
    expect(onTime).to.equal(true);
    w.close();
    await late;
  });
});
