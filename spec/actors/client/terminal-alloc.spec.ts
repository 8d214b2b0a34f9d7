import { expect } from 'chai';
import { existsSync } from 'node:fs';
import type { RunnerHook } from '../../../actors/runner/hooks.ts';
import { createClient } from '../../../actors/client/client.ts';
import type { ClientStatus } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { record, useTempClients, viewWhere } from '../../support/temp-client.ts';

/** A hook that records every call it gets. */
function recordingHook(calls: string[]): RunnerHook {
  return {
    name: 'rec',
    prerun: async () => void calls.push('prerun'),
    update: async () => void calls.push('update'),
    postrun: async () => void calls.push('postrun'),
    destroy: async () => void calls.push('destroy'),
  };
}

describe('client: a terminal allocation never runs (Nomad #5883)', () => {
  const newClient = useTempClients();

  for (const status of ['complete', 'failed', 'lost'] as ClientStatus[]) {
    it(`addAlloc with clientStatus ${status}: no alloc dir, no hooks, no task starts, and the status stays ${status}`, async () => {
      const calls: string[] = [];
      const client = newClient({ hooks: [recordingHook(calls)] });
      const events = record(client, 'task.event');
      const r = client.addAlloc(makeAlloc([mockTask('web', { run_for: '10s' })], { clientStatus: status }));
      await r.waitFor('stopping');
      await viewWhere(client, r, (a) => a.taskStates?.web?.state === 'dead');
      await new Promise((res) => setImmediate(res));
      expect(existsSync(r.allocDir.dir)).to.equal(false);
      expect(calls).to.deep.equal([]);
      expect(events.items.map((m) => m.event.type)).to.not.include.members(['Task Setup']);
      expect(events.items.map((m) => m.event.type).filter((t) => t === 'Started' || t === 'Task Setup')).to.deep.equal([]);
      expect(r.alloc().clientStatus).to.equal(status);
      await r.destroy();
      expect(calls).to.deep.equal(['destroy']);
    });
  }

  it('a restored client-terminal (complete) batch alloc runs no prerun hook and no task again', async () => {
    const calls: string[] = [];
    const client = newClient({ hooks: [recordingHook(calls)] });
    const a = makeAlloc([mockTask('web', { run_for: '20ms' })], { jobType: 'batch' });
    const r = client.addAlloc(a);
    await viewWhere(client, r, (x) => x.clientStatus === 'complete');
    await r.waitFor('stopping');
    await viewWhere(client, r, () => calls.includes('postrun'));
    const before = r.alloc().taskStates!.web!.events.length;
    expect(calls).to.deep.equal(['prerun', 'postrun']);
    await client.shutdown();

    const again = createClient({ dataDir: client.dataDir, hooks: [recordingHook(((calls.length = 0), calls))] });
    try {
      const events = record(again, 'task.event');
      const [r2] = await again.restore();
      await r2!.waitFor('stopping');
      // Run the restored alloc's chart to its end: a re-run would have come before it.
      const view = r2!.alloc();
      await r2!.destroy();
      expect(calls).to.deep.equal(['destroy']);
      expect(events.items.map((m) => m.event.type)).to.deep.equal([]);
      expect(view.clientStatus).to.equal('complete');
      expect(view.taskStates!.web!.events.length).to.equal(before);
    } finally {
      await Promise.allSettled(again.runners().map((x) => x.destroy()));
      await again.shutdown();
    }
  });
});
