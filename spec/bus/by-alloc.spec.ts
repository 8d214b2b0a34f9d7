/**
 * byAlloc: per-alloc listeners of one message kind share one bus subscription, routed by allocId.
 */
import { expect } from 'chai';
import { Observable } from 'rxjs';
import { createBus, type Bus } from '../../bus/bus.ts';
import { byAlloc } from '../../bus/by-alloc.ts';

/** A real bus whose `of` streams count their live subscriptions. */
function countingBus(): { bus: Bus; active: () => number } {
  const bus = createBus(() => 0);
  let active = 0;
  const counted: Bus = {
    ...bus,
    of: (type) =>
      new Observable((subscriber) => {
        active++;
        const s = bus.of(type).subscribe(subscriber);
        return () => {
          active--;
          s.unsubscribe();
        };
      }),
  };
  return { bus: counted, active: () => active };
}

const state = (allocId: string, to: string) => ({ allocId, from: 'pending', to }) as never;

describe('bus: byAlloc routes', () => {
  it('hands each listener only its own alloc’s messages, from one bus subscription for any number of allocs', () => {
    const { bus, active } = countingBus();
    const route = byAlloc(bus, 'alloc.state');
    const got = new Map<string, string[]>();
    const offs = Array.from({ length: 1000 }, (_, i) => {
      const id = `a${i}`;
      return route.on(id, (m) => got.set(id, [...(got.get(id) ?? []), m.to]));
    });
    expect(active()).to.equal(1);
    expect(route.size).to.equal(1000);
    bus.publish('alloc.state', state('a7', 'running'));
    bus.publish('alloc.state', state('a999', 'stopping'));
    bus.publish('alloc.state', state('nobody', 'running'));
    expect([...got]).to.deep.equal([
      ['a7', ['running']],
      ['a999', ['stopping']],
    ]);
    for (const off of offs) off();
    expect(route.size).to.equal(0);
    expect(active(), 'the last listener gone, the route leaves the bus').to.equal(0);
  });

  it('keeps several listeners of one alloc, lets one stop (even from inside a call) without the others, and is idempotent', () => {
    const { bus, active } = countingBus();
    const route = byAlloc(bus, 'alloc.state');
    const calls: string[] = [];
    const offA = route.on('x', () => {
      calls.push('a');
      offA(); // stops itself while the route is iterating
    });
    const offB = route.on('x', (m) => calls.push(`b:${m.to}`));
    bus.publish('alloc.state', state('x', 'running'));
    bus.publish('alloc.state', state('x', 'stopping'));
    expect(calls).to.deep.equal(['a', 'b:running', 'b:stopping']);
    offA();
    expect(route.size).to.equal(1);
    offB();
    offB();
    expect(route.size).to.equal(0);
    expect(active()).to.equal(0);
    // A new listener subscribes again.
    route.on('x', (m) => calls.push(`c:${m.to}`));
    expect(active()).to.equal(1);
    bus.publish('alloc.state', state('x', 'destroyed'));
    expect(calls.at(-1)).to.equal('c:destroyed');
  });

  it('counts one function registered twice for one alloc once', () => {
    const { bus } = countingBus();
    const route = byAlloc(bus, 'task.state');
    let n = 0;
    const fn = () => void n++;
    const off1 = route.on('x', fn);
    route.on('x', fn);
    bus.publish('task.state', { allocId: 'x' } as never);
    expect(n).to.equal(1);
    expect(route.size).to.equal(1);
    off1();
    expect(route.size).to.equal(0);
  });
});
