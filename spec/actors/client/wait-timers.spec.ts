import { expect } from 'chai';
import { realClock, type Clock } from '../../../model/clock.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { useTempClients } from '../../support/temp-client.ts';

/** The real clock, recording every delay scheduled through it. */
function recordingClock(): Clock & { delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    now: realClock.now,
    setTimeout: (fn, ms) => {
      delays.push(ms);
      return realClock.setTimeout(fn, ms);
    },
    clearTimeout: realClock.clearTimeout,
  };
}

describe('client: waiting for previous allocations holds no timer unless bounded', () => {
  const newClient = useTempClients();

  for (const bound of [undefined, 987_654]) {
    it(bound === undefined ? 'unbounded: no timer is scheduled while it waits' : 'prevAllocWaitTimeoutMs: exactly one timer of that length', async () => {
      const clock = recordingClock();
      const client = newClient({ clock, gcIntervalMs: 0, ...(bound !== undefined ? { prevAllocWaitTimeoutMs: bound } : {}) });
      const prev = client.addAlloc(makeAlloc([mockTask('web', { run_for: '1h' })]));
      await prev.waitFor('running');
      const before = clock.delays.length;
      const next = client.addAlloc(makeAlloc([mockTask('web', { run_for: '1h' })], { previousAllocation: prev.allocId }));
      await next.waitFor('waiting-prev');
      expect(next.isWaiting()).to.equal(true);
      const during = clock.delays.slice(before);
      expect(during).to.deep.equal(bound === undefined ? [] : [bound]);
    });
  }
});
