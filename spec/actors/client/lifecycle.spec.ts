import { expect } from 'chai';
import { existsSync, readdirSync } from 'node:fs';
import { AllocNotFoundError, InvalidAllocationError, UnsupportedStanzaError } from '../../../model/errors.ts';
import type { Allocation } from '../../../model/types.ts';
import type { RunnerHook } from '../../../actors/runner/hooks.ts';
import { batchAlloc, makeAlloc, mockTask } from '../../support/fixtures.ts';
import { record, useTempClients, viewWhere } from '../../support/temp-client.ts';
import { until } from '../../support/until.ts';

const stopOf = (a: Allocation, index = a.allocModifyIndex + 1): Allocation => ({ ...a, desiredStatus: 'stop', allocModifyIndex: index });
const types = (a: Allocation, task: string) => a.taskStates![task]!.events.map((e) => e.type);

describe('client: allocation lifecycle on the mock driver', () => {
  const newClient = useTempClients();

  it('runs an alloc: pending → waiting-prev → running, with Nomad task events', async () => {
    const client = newClient();
    const states = record(client, 'alloc.state');
    const alloc = makeAlloc([mockTask('web', { run_for: '10s' })]);
    const r = client.addAlloc(alloc);
    expect(client.runner(alloc.id)).to.equal(r);
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
    expect(r.state()).to.equal('running');
    expect(r.alloc().clientStatus).to.equal('running');
    expect(types(r.alloc(), 'web')).to.deep.equal(['Received', 'Task Setup', 'Started']);
    expect(existsSync(`${r.allocDir.dir}/alloc/logs`)).to.equal(true);
    expect(states.items.map((m) => m.to)).to.deep.equal(['waiting-prev', 'running']);
  });

  it('a batch alloc completes and rests in stopping with client status complete', async () => {
    const client = newClient();
    const r = client.addAlloc(batchAlloc('20ms'));
    await r.waitFor('stopping');
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    expect(r.alloc().clientStatus).to.equal('complete');
    const ts = r.alloc().taskStates!.web!;
    expect(ts.state).to.equal('dead');
    expect(ts.failed).to.equal(false);
    expect(types(r.alloc(), 'web')).to.include('Terminated');
    expect(r.state()).to.equal('stopping');
  });

  it('a stop is an update with a terminal desired status: tasks are killed, no update hooks run', async () => {
    const calls: string[] = [];
    const hook: RunnerHook = {
      name: 'recorder',
      update: async (ctx) => {
        calls.push(`update:${ctx.alloc.allocModifyIndex}`);
        updated();
      },
      postrun: async () => void calls.push('postrun'),
    };
    let updated!: () => void;
    const updateRan = new Promise<void>((res) => (updated = res));
    const client = newClient({ hooks: [hook] });
    const alloc = makeAlloc([mockTask('web', { run_for: '10s' })]);
    const r = client.addAlloc(alloc);
    await r.waitFor('running');
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
    client.updateAlloc({ ...alloc, allocModifyIndex: 2 });
    await updateRan;
    client.updateAlloc(stopOf(alloc, 3));
    await r.waitFor('stopping');
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    expect(calls).to.deep.equal(['update:2', 'postrun']);
    expect(types(r.alloc(), 'web')).to.include.members(['Killing', 'Terminated', 'Killed']);
    expect(r.alloc().desiredStatus).to.equal('stop');
  });

  it('updates go through a single-slot queue (higher index wins; equal: newer call wins)', async () => {
    const seen: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const hook: RunnerHook = {
      name: 'slow',
      update: async (ctx) => {
        seen.push(ctx.alloc.allocModifyIndex);
        if (seen.length === 2) secondRan();
        if (seen.length === 1) await gate;
      },
    };
    let secondRan!: () => void;
    const second = new Promise<void>((res) => (secondRan = res));
    const client = newClient({ hooks: [hook] });
    const alloc = makeAlloc([mockTask('web')]);
    const r = client.addAlloc(alloc);
    await r.waitFor('running');
    r.update({ ...alloc, allocModifyIndex: 2 }); // processing, blocked in the hook
    r.update({ ...alloc, allocModifyIndex: 5, jobId: alloc.jobId }); // queued
    r.update({ ...alloc, allocModifyIndex: 3 }); // dropped: queued one is strictly higher
    const newest = { ...alloc, allocModifyIndex: 5, clientDescription: 'newer' };
    r.update(newest); // equal index: the newer call replaces the queued one
    release();
    await second; // the queued update ran (the slot held one: no third can follow)
    await viewWhere(client, r, (a) => a.allocModifyIndex === 5);
    expect(seen).to.deep.equal([2, 5]);
  });

  it('throws InvalidAllocationError for an unknown driver or bad driver config; nothing on disk', () => {
    const client = newClient();
    const a = makeAlloc([mockTask('web'), { name: 'x', driver: 'nope', config: {} }]);
    expect(() => client.addAlloc(a)).to.throw(InvalidAllocationError, /job\.taskGroups\[0\]\.tasks\[1\]\.driver: unknown driver "nope"/);
    const docker = makeAlloc([mockTask('web'), { name: 'x', driver: 'podman', config: {} }]);
    expect(() => client.addAlloc(docker)).to.throw(
      UnsupportedStanzaError,
      /driver "podman" is not supported by berth \(job\.taskGroups\[0\]\.tasks\[1\]\.driver\)/,
    );
    const b = makeAlloc([mockTask('web', { run_for: '10' })]);
    expect(() => client.addAlloc(b)).to.throw(InvalidAllocationError, /tasks\[0\]\.config\.run_for: .*missing unit/);
    expect(readdirSync(`${client.dataDir}/alloc`)).to.deep.equal([]);
    expect(client.runners()).to.have.length(0);
    expect(() => client.updateAlloc({ ...a, id: 'nope' })).to.throw(InvalidAllocationError);
  });

  it('updateAlloc / destroyAlloc of an unknown alloc is a typed error', async () => {
    const client = newClient();
    const a = makeAlloc([mockTask('web')]);
    expect(() => client.updateAlloc(a)).to.throw(AllocNotFoundError);
    let err: unknown;
    await client.destroyAlloc(a.id).catch((e) => (err = e));
    expect(err).to.be.instanceOf(AllocNotFoundError);
  });

  it('updates$ carries the client view for the servers', async () => {
    const client = newClient();
    const statuses: string[] = [];
    client.updates$.subscribe((a) => statuses.push(a.clientStatus));
    const r = client.addAlloc(batchAlloc('10ms'));
    await r.waitFor('stopping');
    expect(statuses).to.include('running');
    expect(statuses[statuses.length - 1]).to.equal('complete');
  });

  it('waitFor resolves at once for a state already passed, and honours an abort signal', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([mockTask('web')]));
    await r.waitFor('running');
    await r.waitFor('pending');
    const ctl = new AbortController();
    const p = r.waitFor('destroyed', ctl.signal);
    ctl.abort(new Error('gave up'));
    let err: unknown;
    await p.catch((e) => (err = e));
    expect((err as Error).message).to.equal('gave up');
  });

  it('publishes task.state as a task changes state and task.event for each event it records', async () => {
    const client = newClient();
    const states = record(client, 'task.state');
    const events = record(client, 'task.event');
    const r = client.addAlloc(batchAlloc('10ms'));
    await r.waitFor('stopping');
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    const seen = states.items.map((m) => m.state.state).filter((s, i, all) => s !== all[i - 1]);
    expect(seen).to.deep.equal(['pending', 'running', 'dead']);
    expect(states.items.every((m) => m.allocId === r.allocId && m.task === 'web')).to.equal(true);
    expect(events.items.map((m) => m.event.type)).to.deep.equal(types(r.alloc(), 'web'));
  });

  it('a failed prerun hook fails the alloc: client status failed, no task started', async () => {
    const client = newClient({ hooks: [{ name: 'gate', prerun: async () => Promise.reject(new Error('hook says no')) }] });
    const r = client.addAlloc(makeAlloc([mockTask('web', { run_for: '10s' })]));
    await viewWhere(client, r, (a) => a.clientStatus === 'failed');
    expect(types(r.alloc(), 'web')).to.not.include('Started');
    expect(r.alloc().taskStates!.web!.state).to.equal('dead');
  });

  it('fingerprintDrivers reports every driver the client has; raw_exec and mock_driver are detected and healthy', async () => {
    const fp = await newClient().fingerprintDrivers();
    expect(Object.keys(fp)).to.include.members(['raw_exec', 'exec', 'docker', 'mock_driver']);
    expect(fp.raw_exec).to.include({ detected: true, healthy: true });
    expect(fp.mock_driver).to.include({ detected: true, healthy: true });
  });

  it("a hook's signal aborts when its allocation is destroyed: a prerun still waiting lets the destroy finish", async () => {
    let seen: AbortSignal | undefined;
    const hook: RunnerHook = {
      name: 'slow',
      prerun: ({ signal }) =>
        new Promise((_resolve, reject) => {
          seen = signal;
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
        }),
    };
    const client = newClient({ hooks: [hook] });
    const r = client.addAlloc(makeAlloc([mockTask('web', { run_for: '10s' })]));
    await until(() => seen !== undefined, 5000, 'the prerun hook');
    expect(seen!.aborted).to.equal(false);
    await r.destroy();
    expect(seen!.aborted).to.equal(true);
    expect(r.state()).to.equal('destroyed');
    expect(types(r.alloc(), 'web')).to.not.include('Started');
  });
});
