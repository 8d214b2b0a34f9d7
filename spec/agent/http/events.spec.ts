/**
 * `/v1/event/stream`'s two bounds, on the hub and the route with a response that never drains
 * (the far side of the HTTP boundary): the replay buffer keeps the last 1,000 events, and a
 * reader that falls 10,000 lines behind is cut off rather than buffered without end.
 */
import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import { Subject } from 'rxjs';
import { EVENT_BUFFER, EVENT_QUEUE_LIMIT, EventHub, eventRoutes } from '../../../agent/http/events.ts';
import type { Handler, Req } from '../../../agent/http/router.ts';

/** The parts of the core the hub reads: the state's events and the client's bus. */
function fakeCore() {
  const events$ = new Subject<{ topic: string; type: string; key: string; index: number; object: unknown }>();
  const core = { state: { events$, waiters: { index: 0 } }, client: { bus: { messages$: new Subject() } } };
  return { core: core as never, emit: (index: number) => events$.next({ topic: 'Other', type: 'Changed', key: `k${index}`, index, object: { index } }) };
}

describe('agent: the event stream bounds', () => {
  it('keeps the last 1,000 events to replay from ?index=N, oldest dropped first', () => {
    const { core, emit } = fakeCore();
    const hub = new EventHub(core);
    for (let i = 1; i <= 1005; i++) emit(i);
    expect(EVENT_BUFFER).to.equal(1000);
    expect(hub.recent.map((e) => e.index)).to.deep.equal(Array.from({ length: 1000 }, (_, i) => i + 6));
  });

  it('cuts off a reader more than 10,000 lines behind instead of queueing without end', async () => {
    const { core, emit } = fakeCore();
    let handler: Handler | undefined;
    eventRoutes({ on: (_m: string, _p: string, h: Handler) => (handler = h) } as never, core, 3_600_000);
    const res = Object.assign(new EventEmitter(), {
      destroyed: false,
      writeHead: () => res,
      flushHeaders: () => {},
      write: () => false,
      end: () => {},
      destroy: () => {
        res.destroyed = true;
        res.emit('close');
      },
    });
    const ac = new AbortController();
    const served = handler!({ query: new URLSearchParams('topic=Other'), res, signal: ac.signal } as unknown as Req);
    expect(EVENT_QUEUE_LIMIT).to.equal(10_000);
    for (let i = 1; i <= 10_001; i++) {
      emit(i);
      if (i === 10_000) expect(res.destroyed, 'not at 10,000 behind').to.equal(false);
    }
    expect(res.destroyed).to.equal(true);
    ac.abort();
    await served;
  });
});
