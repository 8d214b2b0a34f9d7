import { expect } from 'chai';
import { createBus, type BusMessage } from '../../bus/index.ts';

describe('createBus', () => {
  it('delivers typed messages, filtered by kind, with a time', () => {
    const bus = createBus(() => 42);
    const all: BusMessage[] = [];
    const states: string[] = [];
    bus.messages$.subscribe((m) => all.push(m));
    bus.of('alloc.state').subscribe((m) => states.push(`${m.from}->${m.to}`));
    bus.publish('alloc.state', { allocId: 'a', from: 'pending', to: 'running' });
    bus.publish('watcher.retry', { allocId: 'a', watchedAllocId: 'b', error: 'x', delayMs: 5 });
    expect(states).to.deep.equal(['pending->running']);
    expect(all.map((m) => m.type)).to.deep.equal(['alloc.state', 'watcher.retry']);
    expect(all[0]!.time).to.equal(42);
  });
  it('a publish nobody listens to costs nothing: no message is built (the clock is not read)', () => {
    let reads = 0;
    const bus = createBus(() => ++reads);
    bus.publish('client.error', { error: 'unheard' });
    expect(reads).to.equal(0);
    const sub = bus.messages$.subscribe(() => {});
    bus.publish('client.error', { error: 'heard' });
    expect(reads).to.equal(1);
    sub.unsubscribe();
  });
  it('ignores publishes after close and completes streams', () => {
    const bus = createBus();
    let done = false;
    let n = 0;
    bus.messages$.subscribe({ next: () => n++, complete: () => (done = true) });
    bus.close();
    bus.publish('client.error', { error: 'late' });
    expect(done).to.equal(true);
    expect(n).to.equal(0);
  });
});
