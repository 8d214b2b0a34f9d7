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
    it(`addAlloc with clientStatus ${status}: no alloc dir, no prerun hook, no task starts, postrun hooks only (Nomad's Run), and the status stays ${status}`, async () => {
      const calls: string[] = [];
      const client = newClient({ hooks: [recordingHook(calls)] });
      const events = record(client, 'task.event');
      const r = client.addAlloc(makeAlloc([mockTask('web', { run_for: '10s' })], { clientStatus: status }));
      await r.waitFor('stopping');
      await viewWhere(client, r, (a) => a.taskStates?.web?.state === 'dead');
      await r.waitFor('stopping');
      await viewWhere(client, r, () => calls.includes('postrun'));
      expect(existsSync(r.allocDir.dir)).to.equal(false);
      expect(calls).to.deep.equal(['postrun']);
      expect(events.items.map((m) => m.event.type)).to.not.include.members(['Task Setup']);
      expect(events.items.map((m) => m.event.type).filter((t) => t === 'Started' || t === 'Task Setup')).to.deep.equal([]);
      expect(r.alloc().clientStatus).to.equal(status);
      await r.destroy();
      expect(calls).to.deep.equal(['postrun', 'destroy']);
    });
  }

  it("a restored client-terminal (complete) batch alloc runs no prerun hook and no task again; its postrun hooks run again, as Nomad's Run does", async () => {
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
      await viewWhere(again, r2!, () => calls.includes('postrun'));
      expect(calls).to.deep.equal(['postrun']);
      expect(events.items.map((m) => m.event.type)).to.deep.equal([]);
      expect(r2!.alloc().clientStatus).to.equal('complete');
      expect(r2!.alloc().taskStates!.web!.events.length).to.equal(before);
      await r2!.destroy();
    } finally {
      await Promise.allSettled(again.runners().map((x) => x.destroy()));
      await again.shutdown();
    }
  });
});
