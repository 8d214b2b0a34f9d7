import { expect } from 'chai';
import * as R from '../../../machines/alloc/reducers.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { flush } from '../support/charts.ts';
import { harness } from './harness.ts';

/**
 * What the alloc chart hands its effects (their inputs), what it keeps from their outputs, and
 * the max_run_duration timer child it spawns, moves and stops: stub effects, simulated clock.
 */
describe('alloc chart: what its effects get and what it keeps (stub effects, simulated clock)', () => {
  it('the alloc dir is built for this alloc, saying whether it is a restore', async () => {
    const a = makeAlloc([mockTask('web')]);
    const fresh = harness(a);
    expect(fresh.build.last().input).to.deep.equal({ allocId: a.id, restoring: false });
    fresh.actor.stop();
    const restored = harness(a, { restoring: true });
    expect(restored.build.last().input).to.deep.equal({ allocId: a.id, restoring: true });
    restored.actor.stop();
  });

  it('the wait gets the alloc and the watch sources; the node the previous alloc ran on reaches the migration plan', async () => {
    const a = makeAlloc([mockTask('web')], { previousAllocation: 'prev-1', group: { ephemeralDisk: { migrate: true, sticky: true } } });
    const h = harness(a, { watchSources: { rpc: true } });
    h.build.last().resolve();
    await flush();
    expect(h.value()).to.equal('{"waiting-prev":{"waiting":"unbounded"}}');
    expect(h.awaitPrev.last().input).to.deep.equal({ alloc: a, rpc: true });
    h.awaitPrev.last().resolve({ previousNodeId: 'node-2' });
    await flush();
    expect(h.value()).to.equal('{"waiting-prev":"migrating"}');
    expect(h.ctx().previousNodeId).to.equal('node-2');
    expect(h.migrate.last().input).to.deep.equal({ allocId: a.id, plan: R.planMigration(h.ctx()) });
    expect(h.migrate.last().input.plan).to.deep.equal({ kind: 'remote', previousAllocId: 'prev-1', nodeId: 'node-2' });
    h.actor.stop();
  });

  it('a wait that resolves with nothing moves on to the migration, with no previous node', async () => {
    const h = harness(makeAlloc([mockTask('web')], { previousAllocation: 'prev-1' }));
    h.build.last().resolve();
    await flush();
    h.awaitPrev.last().resolve(undefined);
    await flush();
    expect(h.value()).to.equal('{"waiting-prev":"migrating"}');
    expect(h.ctx().previousNodeId).to.equal(undefined);
    h.actor.stop();
  });

  it('max_run_duration: one timer child per state that keeps it, moved by an update, stopped at the end', async () => {
    const a = makeAlloc([mockTask('web')], { jobType: 'batch', createTime: 1000, group: { maxRunDurationMs: 5000 } });
    const h = harness(a);
    expect(h.timers).to.have.length(0); // not armed before the dir is built
    h.build.last().resolve();
    await flush();
    expect(h.timers.map((t) => t.input)).to.deep.equal([{ deadline: 6000 }]);
    expect(h.child('max-run')).to.not.equal(undefined);
    expect(h.ctx().maxRunTimer).to.equal('armed');
    h.migrate.last().resolve();
    await flush();
    // Waiting's timer is stopped; running arms its own.
    expect(h.timers.map((t) => t.stopped)).to.deep.equal([true, false]);
    h.hook('prerun').resolve();
    await flush();
    h.start.last().resolve({ ok: true, handle: { driver: 'stub', id: `${a.id}/web/1`, config: {} as never, startedAt: 0, pid: 1, state: {} }, time: 1 });
    await flush();
    const longer = makeAlloc([mockTask('web')], { id: a.id, jobType: 'batch', createTime: 1000, allocModifyIndex: 2, group: { maxRunDurationMs: 9000 } });
    h.actor.send({ type: 'update', alloc: longer, time: 2 });
    await flush();
    expect(h.timers[1]!.got).to.deep.equal([{ type: 'arm', deadline: 10_000 }]);
    expect(h.ctx().maxRunDeadline).to.equal(10_000);
    h.actor.send({ type: 'update', alloc: { ...longer, desiredStatus: 'stop', allocModifyIndex: 3 }, time: 3 });
    await flush();
    h.hook('preKill').resolve();
    await flush();
    h.kill.last().resolve({ result: { exitCode: 130, signal: 2 }, time: 4 });
    await flush();
    h.hook('postrun').resolve();
    await flush();
    expect(h.value()).to.equal('{"stopping":"stopped"}');
    expect(h.ctx().maxRunTimer).to.equal('closed');
    expect(h.child('max-run')).to.equal(undefined);
    expect(h.timers.every((t) => t.stopped)).to.equal(true);
    h.actor.stop();
  });

  it("a stop's group shutdown_delay moves the chart's clock by the delay (the kills are stamped after it)", async () => {
    const a = makeAlloc([mockTask('web')], { group: { shutdownDelayMs: 1000 } });
    const h = harness(a);
    await h.toRunning();
    h.actor.send({ type: 'update', alloc: { ...a, desiredStatus: 'stop', allocModifyIndex: 2 }, time: 2 });
    await flush();
    expect(h.value()).to.equal('{"stopping":"groupDelay"}');
    expect(h.ctx().now).to.equal(2);
    h.clock.increment(999);
    await flush();
    expect(h.value()).to.equal('{"stopping":"groupDelay"}');
    h.clock.increment(1);
    await flush();
    expect(h.value()).to.equal('{"stopping":"preKillHooks"}');
    expect(h.ctx().now).to.equal(1002);
    h.actor.stop();
  });
});
