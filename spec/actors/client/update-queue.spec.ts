import { expect } from 'chai';
import type { Allocation } from '../../../model/types.ts';
import type { RunnerHook } from '../../../actors/runner/hooks.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';

describe('client: updates apply one at a time, in the alloc chart', () => {
  const newClient = useTempClients();

  it('while update hooks run, later updates wait in one slot (newest, or higher index, wins); a stop waits its turn and runs no hook', async () => {
    const calls: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let secondCall!: () => void;
    const twoCalls = new Promise<void>((r) => (secondCall = r));
    const hook: RunnerHook = {
      name: 'slow',
      update: async (ctx) => {
        calls.push(`update:${ctx.alloc.allocModifyIndex}:${ctx.alloc.job.name}`);
        if (calls.length === 2) secondCall();
        if (ctx.alloc.allocModifyIndex === 2) await gate;
      },
    };
    const client = newClient({ hooks: [hook] });
    const alloc = makeAlloc([mockTask('web', { run_for: '10s' })]);
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
    const at = (i: number, v = '', over: Partial<Allocation> = {}): Allocation => ({ ...alloc, job: { ...alloc.job, name: v }, allocModifyIndex: i, ...over });
    client.updateAlloc(at(2, 'a'));
    client.updateAlloc(at(5, 'b'));
    client.updateAlloc(at(4, 'stale')); // lower than the queued 5: dropped
    expect(r.alloc().allocModifyIndex).to.equal(2);
    client.updateAlloc(at(5, 'c')); // equal index: the newer call wins
    release();
    await viewWhere(client, r, (a) => a.allocModifyIndex === 5);
    await twoCalls; // the queued update's hooks ran (no third call can come: the slot held one)
    expect(calls).to.deep.equal(['update:2:a', 'update:5:c']);
    client.updateAlloc(at(6, 'stop', { desiredStatus: 'stop' }));
    await r.waitFor('stopping');
    expect(calls).to.have.length(2);
    expect(r.alloc().allocModifyIndex).to.equal(6);
  });
});
