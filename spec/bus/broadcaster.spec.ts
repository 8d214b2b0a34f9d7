import { expect } from 'chai';
import { BehaviorSubject } from 'rxjs';
import { AllocBroadcaster } from '../../bus/broadcaster.ts';
import { AllocBroadcasterClosedError, BerthError, type Allocation } from '../../model/index.ts';
import { makeAlloc, mockTask } from '../support/fixtures.ts';

const base = makeAlloc([mockTask('web')]);
const v = (index: number, clientStatus: Allocation['clientStatus'] = 'running'): Allocation => ({ ...base, allocModifyIndex: index, clientStatus });

describe('AllocBroadcaster', () => {
  it('primes a new listener with the last accepted alloc', async () => {
    const b = new AllocBroadcaster();
    b.send(v(1));
    b.send(v(2));
    const l = b.listen();
    expect((await l.next())!.allocModifyIndex).to.equal(2);
    l.close();
  });

  it('a listener created before any send waits for the first one', async () => {
    const b = new AllocBroadcaster();
    const l = b.listen();
    const p = l.next();
    b.send(v(7));
    expect((await p)!.allocModifyIndex).to.equal(7);
  });

  it('conflates: a slow reader only gets the newest version', async () => {
    const b = new AllocBroadcaster();
    const l = b.listen();
    for (let i = 1; i <= 100; i++) b.send(v(i));
    expect((await l.next())!.allocModifyIndex).to.equal(100);
    // nothing else pending: the next read waits for a new send
    let settled = false;
    const p = l.next().then((a) => ((settled = true), a));
    await Promise.resolve();
    expect(settled).to.equal(false);
    b.send(v(101));
    expect((await p)!.allocModifyIndex).to.equal(101);
  });

  it('drops stale versions and accepts equal indexes', () => {
    const b = new AllocBroadcaster();
    expect(b.send(v(5))).to.equal(true);
    expect(b.send(v(4))).to.equal(false);
    expect(b.last!.allocModifyIndex).to.equal(5);
    expect(b.send(v(5, 'complete'))).to.equal(true);
    expect(b.last!.clientStatus).to.equal('complete');
  });

  it('throws after close, and close is idempotent', () => {
    const b = new AllocBroadcaster();
    b.close();
    b.close();
    expect(b.closed).to.equal(true);
    expect(() => b.send(v(1))).to.throw(AllocBroadcasterClosedError, 'alloc broadcaster closed');
  });

  it('primes listeners even after close, then ends', async () => {
    const b = new AllocBroadcaster();
    b.send(v(3, 'complete'));
    b.close();
    const l = b.listen();
    expect((await l.next())!.clientStatus).to.equal('complete');
    expect(await l.next()).to.equal(undefined);
    const seen: number[] = [];
    let completed = false;
    b.listen().updates$.subscribe({ next: (a) => seen.push(a.allocModifyIndex), complete: () => (completed = true) });
    expect(seen).to.deep.equal([3]);
    expect(completed).to.equal(true);
  });

  it('a pending value survives the broadcaster closing', async () => {
    const b = new AllocBroadcaster();
    const l = b.listen();
    b.send(v(9));
    b.close();
    expect((await l.next())!.allocModifyIndex).to.equal(9);
    expect(await l.next()).to.equal(undefined);
  });

  it('updates$ replays the last alloc then every accepted one, and completes on listener close', () => {
    const b = new AllocBroadcaster();
    b.send(v(1));
    const l = b.listen();
    const seen: number[] = [];
    let completed = false;
    l.updates$.subscribe({ next: (a) => seen.push(a.allocModifyIndex), complete: () => (completed = true) });
    b.send(v(2));
    b.send(v(1)); // stale
    b.send(v(3));
    expect(seen).to.deep.equal([1, 2, 3]);
    l.close();
    l.close();
    expect(completed).to.equal(true);
  });

  it('an aborted signal rejects next() with its reason', async () => {
    const b = new AllocBroadcaster();
    const l = b.listen();
    const ctl = new AbortController();
    const p = l.next(ctl.signal);
    ctl.abort(new Error('bye'));
    let err: unknown;
    await p.catch((e) => (err = e));
    expect((err as Error).message).to.equal('bye');
    const ctl2 = new AbortController();
    ctl2.abort(new Error('already'));
    await l.next(ctl2.signal).catch((e) => (err = e));
    expect((err as Error).message).to.equal('already');
  });

  it('a second next() while one waits is refused with a BerthError; the first still gets the value', async () => {
    const b = new AllocBroadcaster();
    const l = b.listen();
    const first = l.next();
    let err: unknown;
    await l.next().catch((e) => (err = e));
    expect(err).to.be.instanceOf(BerthError);
    expect((err as Error).message).to.equal('AllocListener.next: another next() is already waiting');
    b.send(v(3));
    expect((await first)!.allocModifyIndex).to.equal(3);
    l.close();
  });

  /** A signal whose abort listeners are counted as they are added and removed. */
  function countedSignal() {
    const ctl = new AbortController();
    // Counts the listeners really registered: a remove for another type or function removes nothing.
    const registered = new Set<string>();
    const fns = new Map<unknown, number>();
    const key = (type: string, fn: unknown) => {
      if (!fns.has(fn)) fns.set(fn, fns.size);
      return `${type}#${fns.get(fn)}`;
    };
    const live = {
      get n() {
        return registered.size;
      },
    };
    const add = ctl.signal.addEventListener.bind(ctl.signal);
    const remove = ctl.signal.removeEventListener.bind(ctl.signal);
    ctl.signal.addEventListener = ((...a: Parameters<typeof add>) => (registered.add(key(a[0], a[1])), add(...a))) as typeof add;
    ctl.signal.removeEventListener = ((...a: Parameters<typeof remove>) => (registered.delete(key(a[0], a[1])), remove(...a))) as typeof remove;
    return { ctl, live };
  }

  it("a value or a close that wakes a waiting next(signal) removes its abort listener from the caller's signal", async () => {
    const b = new AllocBroadcaster();
    const l = b.listen();
    const one = countedSignal();
    const p = l.next(one.ctl.signal);
    expect(one.live.n).to.equal(1);
    b.send(v(4));
    expect((await p)!.allocModifyIndex).to.equal(4);
    expect(one.live.n, 'after a value').to.equal(0);
    const two = countedSignal();
    const q = l.next(two.ctl.signal);
    l.close();
    expect(await q).to.equal(undefined);
    expect(two.live.n, 'after close').to.equal(0);
  });

  it('fans out to many listeners; closing one does not affect the others', async () => {
    const b = new AllocBroadcaster();
    const ls = Array.from({ length: 50 }, () => b.listen());
    ls[0]!.close();
    b.send(v(1));
    expect(await ls[0]!.next()).to.equal(undefined);
    const got = await Promise.all(ls.slice(1).map((l) => l.next()));
    expect(got.every((a) => a!.allocModifyIndex === 1)).to.equal(true);
  });
  it('a send from inside a listener callback reaches every listener after the one being delivered (no stale overwrite)', async () => {
    const b = new AllocBroadcaster();
    const first = b.listen();
    const second = b.listen();
    const seen: number[] = [];
    first.updates$.subscribe((a) => {
      if (a.allocModifyIndex === 1) b.send(v(2)); // re-entrant
    });
    second.updates$.subscribe((a) => seen.push(a.allocModifyIndex));
    b.send(v(1));
    expect(seen).to.deep.equal([1, 2]);
    expect((await second.next())!.allocModifyIndex).to.equal(2);
    expect((await first.next())!.allocModifyIndex).to.equal(2);
  });

  it('a listener watched through both next() and updates$ sees each send once on each', async () => {
    const b = new AllocBroadcaster();
    const l = b.listen();
    const seen: number[] = [];
    const sub = l.updates$.subscribe((a) => seen.push(a.allocModifyIndex));
    const p = l.next();
    b.send(v(1));
    b.send(v(2));
    expect((await p)!.allocModifyIndex).to.equal(1);
    expect((await l.next())!.allocModifyIndex).to.equal(2);
    expect(seen).to.deep.equal([1, 2]);
    sub.unsubscribe();
    b.send(v(3));
    expect(seen).to.deep.equal([1, 2]);
    b.close();
    expect((await l.next())!.allocModifyIndex).to.equal(3);
    expect(await l.next()).to.equal(undefined);
  });

  it('a closed listener gets nothing more and is dropped from the fan-out', () => {
    const b = new AllocBroadcaster();
    const l = b.listen();
    const seen: number[] = [];
    let completed = false;
    l.updates$.subscribe({ next: (a) => seen.push(a.allocModifyIndex), complete: () => (completed = true) });
    l.close();
    expect(completed).to.equal(true);
    b.send(v(1));
    expect(seen).to.deep.equal([]);
    let late = false;
    l.updates$.subscribe({ next: (a) => seen.push(a.allocModifyIndex), complete: () => (late = true) });
    expect(late).to.equal(true);
    expect(seen).to.deep.equal([]);
  });

  it('holds its state in an RxJS BehaviorSubject, read-only for hosts; each listener is one subscription to it', () => {
    const b = new AllocBroadcaster();
    expect(b.subject).to.equal(undefined); // a BehaviorSubject always holds a value: the first send makes it
    const seen: number[] = [];
    const host = b.state$.subscribe((a) => seen.push(a.allocModifyIndex));
    const early = b.listen();
    b.send(v(1));
    expect(b.subject).to.be.instanceOf(BehaviorSubject);
    const subject = b.subject as BehaviorSubject<Allocation>;
    expect(subject.getValue().allocModifyIndex).to.equal(1);
    const late = b.listen();
    // Watched through updates$ as well, a listener still sits on the subject once.
    late.updates$.subscribe(() => undefined);
    late.updates$.subscribe(() => undefined);
    expect(subject.observed).to.equal(true);
    expect((subject as unknown as { observers: unknown[] }).observers).to.have.length(3); // host, early, late
    b.send(v(0)); // stale: never reaches the subject
    b.send(v(2));
    expect(subject.getValue().allocModifyIndex).to.equal(2);
    expect(seen).to.deep.equal([1, 2]);
    early.close();
    late.close();
    host.unsubscribe();
    expect((subject as unknown as { observers: unknown[] }).observers).to.have.length(0);
    b.close();
    expect(subject.isStopped).to.equal(true);
  });

  it('a close wakes a next() waiting without a signal with undefined', async () => {
    const b = new AllocBroadcaster();
    const l = b.listen();
    const p = l.next();
    l.close();
    expect(await p).to.equal(undefined);
    const l2 = b.listen();
    const q = l2.next();
    b.close();
    expect(await q).to.equal(undefined);
  });

  it('after an aborted next(signal), the listener takes a new next() (the waiter is cleared)', async () => {
    const b = new AllocBroadcaster();
    const l = b.listen();
    const ac = new AbortController();
    const p = l.next(ac.signal);
    ac.abort(new Error('gave up'));
    expect(((await p.catch((e) => e)) as Error).message).to.equal('gave up');
    const q = l.next();
    b.send(v(3));
    expect((await q)!.allocModifyIndex).to.equal(3);
    l.close();
  });

  it('a listener of a closed broadcaster closes cleanly, keeping its primed value', async () => {
    const b = new AllocBroadcaster();
    b.send(v(2));
    b.close();
    const l = b.listen();
    expect((await l.next())!.allocModifyIndex).to.equal(2);
    expect(() => l.close()).not.to.throw();
    expect(await l.next()).to.equal(undefined);
  });

  it('a send from inside a listener callback is accepted (true), and a stale one refused (false)', () => {
    const b = new AllocBroadcaster();
    const l = b.listen();
    const results: boolean[] = [];
    l.updates$.subscribe((a) => {
      if (a.allocModifyIndex === 1) results.push(b.send(v(2)), b.send(v(0)));
    });
    b.send(v(1));
    expect(results).to.deep.equal([true, false]);
    expect(b.last!.allocModifyIndex).to.equal(2);
    l.close();
  });

  it('state$: a subscriber before the first send gets it; unsubscribed, it gets nothing more; one after close of a never-sent broadcaster just completes', () => {
    const b = new AllocBroadcaster();
    const seen: number[] = [];
    let completed = 0;
    const sub = b.state$.subscribe({ next: (a) => seen.push(a.allocModifyIndex), complete: () => completed++ });
    const gone = b.state$.subscribe({ next: (a) => seen.push(-a.allocModifyIndex), complete: () => completed++ });
    gone.unsubscribe(); // before the first send
    b.send(v(1));
    sub.unsubscribe();
    b.send(v(2));
    expect(seen).to.deep.equal([1]);
    expect(completed).to.equal(0);

    const c = new AllocBroadcaster();
    const early: string[] = [];
    c.state$.subscribe({ next: () => early.push('next'), complete: () => early.push('complete') });
    const left = c.state$.subscribe({ complete: () => early.push('left completed') });
    left.unsubscribe();
    c.close();
    expect(early, 'an early subscriber is completed by close, an unsubscribed one is not').to.deep.equal(['complete']);
    const late: string[] = [];
    c.state$.subscribe({ next: () => late.push('next'), complete: () => late.push('complete') });
    expect(late).to.deep.equal(['complete']);
  });

  it('state$: unsubscribing lets go of the subject (before or after the first send)', () => {
    const b = new AllocBroadcaster();
    const early = b.state$.subscribe(() => undefined);
    early.unsubscribe();
    b.send(v(1));
    const subject = b.subject as BehaviorSubject<Allocation>;
    expect(subject.observed, 'an early subscriber that left is never subscribed').to.equal(false);
    const late = b.state$.subscribe(() => undefined);
    expect(subject.observed).to.equal(true);
    late.unsubscribe();
    expect(subject.observed, 'a late subscriber that left').to.equal(false);
  });

  it('state$ after the first send: unsubscribing stops delivery', () => {
    const b = new AllocBroadcaster();
    b.send(v(1));
    const seen: number[] = [];
    const sub = b.state$.subscribe((a) => seen.push(a.allocModifyIndex));
    b.send(v(2));
    sub.unsubscribe();
    b.send(v(3));
    expect(seen).to.deep.equal([1, 2]);
  });
});
