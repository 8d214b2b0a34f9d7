import { expect } from 'chai';
import { config, type ObservableNotification, type Subscriber } from 'rxjs';
import { AllocBroadcaster } from '../../bus/broadcaster.ts';
import type { Allocation } from '../../model/index.ts';
import { makeAlloc, mockTask } from '../support/fixtures.ts';

const base = makeAlloc([mockTask('web')]);
const v = (index: number): Allocation => ({ ...base, allocModifyIndex: index });

/**
 * An observer that unsubscribed must be let go, not merely ignored: a broadcaster that kept it
 * would grow with every subscribe/unsubscribe of a long-lived host. RxJS reports each
 * notification sent to a stopped subscriber through `config.onStoppedNotification` (on a 0 ms
 * timer it schedules at once, so one timer turn after the sends shows them all).
 */
describe('AllocBroadcaster: unsubscribed observers are let go', () => {
  let stopped: Array<ObservableNotification<unknown>>;
  let saved: typeof config.onStoppedNotification;
  beforeEach(() => {
    stopped = [];
    saved = config.onStoppedNotification;
    config.onStoppedNotification = (n: ObservableNotification<unknown>, _s: Subscriber<unknown>) => void stopped.push(n);
  });
  afterEach(() => {
    config.onStoppedNotification = saved;
  });
  const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

  it('updates$: the one that left gets nothing (not even a stopped notification); the other keeps getting every send', async () => {
    const b = new AllocBroadcaster();
    const l = b.listen();
    const left: number[] = [];
    const stays: number[] = [];
    const a = l.updates$.subscribe((x) => left.push(x.allocModifyIndex));
    l.updates$.subscribe((x) => stays.push(x.allocModifyIndex));
    b.send(v(1));
    a.unsubscribe();
    b.send(v(2));
    b.send(v(3));
    l.close();
    await turn();
    expect(left).to.deep.equal([1]);
    expect(stays).to.deep.equal([1, 2, 3]);
    expect(stopped).to.deep.equal([]);
  });

  it('updates$: the last one to leave, then the first again (the list empties and refills)', async () => {
    const b = new AllocBroadcaster();
    b.send(v(1));
    const l = b.listen();
    const seen: string[] = [];
    const first = l.updates$.subscribe((x) => seen.push(`first ${x.allocModifyIndex}`));
    first.unsubscribe();
    b.send(v(2));
    const second = l.updates$.subscribe((x) => seen.push(`second ${x.allocModifyIndex}`));
    b.send(v(3));
    second.unsubscribe();
    b.send(v(4));
    l.close();
    await turn();
    expect(seen).to.deep.equal(['first 1', 'second 2', 'second 3']);
    expect(stopped).to.deep.equal([]);
  });

  it('state$: a subscriber that left is sent nothing more, whether it left before the first send or after', async () => {
    const b = new AllocBroadcaster();
    const before = b.state$.subscribe(() => undefined);
    before.unsubscribe();
    b.send(v(1));
    const after = b.state$.subscribe(() => undefined);
    after.unsubscribe();
    b.send(v(2));
    b.close();
    await turn();
    expect(stopped).to.deep.equal([]);
  });

  it('state$: close does not complete a subscriber that left before the first send', async () => {
    const b = new AllocBroadcaster();
    b.state$.subscribe(() => undefined).unsubscribe();
    b.close();
    await turn();
    expect(stopped).to.deep.equal([]);
  });
});
