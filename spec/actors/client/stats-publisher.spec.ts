import { expect } from 'chai';
import { createBus } from '../../../bus/bus.ts';
import type { BusMessage } from '../../../bus/messages.ts';
import { startStatsPublisher } from '../../../actors/client/stats-publisher.ts';
import type { AllocRunner } from '../../../actors/client/types.ts';
import { emptyUsage } from '../../../model/usage.ts';
import { ManualClock } from '../../support/fake-rpc.ts';

const flush = () => new Promise((r) => setImmediate(r));

describe('stats publisher', () => {
  it("publishes each running task's usage every interval, skips allocs not running, stops cleanly", async () => {
    const clock = new ManualClock();
    const bus = createBus(() => clock.now());
    const got: BusMessage<'task.stats'>[] = [];
    bus.of('task.stats').subscribe((m) => got.push(m));
    let calls = 0;
    const runner = (allocId: string, state: string) =>
      ({
        allocId,
        state: () => state,
        stats: async () => {
          calls++;
          return { resourceUsage: emptyUsage(), tasks: { web: { resourceUsage: emptyUsage(), timestamp: clock.now() } }, timestamp: clock.now() };
        },
      }) as unknown as AllocRunner;
    const stop = startStatsPublisher({ bus, clock, intervalMs: 1000, runners: () => [runner('a', 'running'), runner('b', 'stopping')] });
    clock.advance(999);
    await flush();
    expect(got).to.have.length(0);
    clock.advance(1);
    await flush();
    expect(got.map((m) => [m.allocId, m.task, m.timestamp])).to.deep.equal([['a', 'web', 1000]]);
    clock.advance(1000);
    await flush();
    expect(got).to.have.length(2);
    expect(calls).to.equal(2); // the stopping alloc was never asked
    await stop();
    expect(clock.pending).to.equal(0);
    clock.advance(5000);
    await flush();
    expect(got).to.have.length(2);
  });
});
