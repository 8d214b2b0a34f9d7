import { expect } from 'chai';
import { existsSync } from 'node:fs';
import type { AllocState } from '../../../model/alloc-state.ts';
import type { Allocation } from '../../../model/types.ts';
import type { RunnerHook } from '../../../actors/runner/hooks.ts';
import type { AllocRunner, Client } from '../../../actors/client/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { record, useTempClients, viewWhere } from '../../support/temp-client.ts';

/** Puts a fresh runner into `state` and returns it. */
async function runnerIn(client: Client, state: AllocState): Promise<{ r: AllocRunner; alloc: Allocation; prev?: AllocRunner }> {
  const alloc = makeAlloc([mockTask('web', { run_for: '10s' })]);
  if (state === 'pending') return { r: client.addAlloc(alloc), alloc };
  if (state === 'waiting-prev') {
    const prev = client.addAlloc(makeAlloc([mockTask('web', { run_for: '10s' })]));
    await prev.waitFor('running');
    const next = { ...alloc, previousAllocation: prev.allocId };
    const r = client.addAlloc(next);
    await r.waitFor('waiting-prev');
    expect(r.isWaiting()).to.equal(true);
    return { r, alloc: next, prev };
  }
  const r = client.addAlloc(alloc);
  await r.waitFor('running');
  await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
  if (state === 'stopping' || state === 'destroyed') {
    client.updateAlloc({ ...alloc, desiredStatus: 'stop', allocModifyIndex: 2 });
    await r.waitFor('stopping');
  }
  if (state === 'destroyed') await r.destroy();
  return { r, alloc };
}

describe('client: destroy', () => {
  const newClient = useTempClients();

  for (const state of ['pending', 'waiting-prev', 'running', 'stopping', 'destroyed'] as AllocState[]) {
    it(`works from ${state}, runs every destroy hook even when one fails, removes the alloc dir`, async () => {
      const calls: string[] = [];
      const hooks: RunnerHook[] = [
        { name: 'first', destroy: async () => void calls.push('first') },
        {
          name: 'broken',
          destroy: async () => {
            calls.push('broken');
            throw new Error('disk on fire');
          },
        },
        { name: 'last', destroy: async () => void calls.push('last') },
      ];
      const client = newClient({ hooks });
      const errors = record(client, 'hook.error');
      const { r, prev } = await runnerIn(client, state);
      const wasDestroyed = state === 'destroyed';
      const p = r.destroy();
      expect(r.destroy()).to.equal(p); // idempotent: the same promise
      if (!wasDestroyed) expect(r.isDestroyed()).to.equal(false);
      // From waiting-prev it resolves while the previous alloc still runs (asserted below): the
      // wait was cancelled, not waited out.
      await p;
      expect(r.isDestroyed()).to.equal(true);
      expect(r.state()).to.equal('destroyed');
      expect(client.runner(r.allocId)).to.equal(undefined);
      expect(client.runners()).to.not.include(r);
      expect(existsSync(r.allocDir.dir)).to.equal(false);
      expect(calls).to.deep.equal(['first', 'broken', 'last']);
      if (!wasDestroyed) expect(errors.items.map((e) => e.error)).to.deep.equal(['destroy hook "broken" failed: disk on fire']);
      const ts = r.alloc().taskStates!.web!;
      expect(ts.state).to.equal('dead');
      if (prev) expect(prev.state()).to.equal('running'); // destroying the waiter leaves the previous alloc alone
    });
  }

  it('kills running tasks before the destroy hooks run', async () => {
    let stateAtHook = '';
    const client = newClient({ hooks: [{ name: 'peek', destroy: async (ctx) => void (stateAtHook = ctx.alloc.taskStates!.web!.state) }] });
    const { r } = await runnerIn(client, 'running');
    await r.destroy();
    expect(stateAtHook).to.equal('dead');
    expect(r.alloc().taskStates!.web!.events.map((e) => e.type)).to.include('Killed');
  });
});
