import { expect } from 'chai';
import { taskActorId } from '../../../machines/alloc/index.ts';
import { taskEvent } from '../../../machines/policy/task-events.ts';
import type { TaskHandle } from '../../../model/task-handle.ts';
import type { Allocation } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { flush } from '../support/charts.ts';
import { harness } from './harness.ts';

/**
 * Alloc chart paths whose actions only show in what they leave behind (the context, the hooks
 * run, the events tasks get): stub effects, simulated clock.
 */
const stop = (a: Allocation, over: Partial<Allocation> = {}): Allocation => ({
  ...a,
  desiredStatus: 'stop',
  allocModifyIndex: a.allocModifyIndex + 1,
  ...over,
});

describe('alloc chart paths (stub effects, simulated clock)', () => {
  it("a stop whose update says noShutdownDelay skips the group's shutdown_delay: straight to the preKill hooks", async () => {
    const a = makeAlloc([mockTask('web')], { group: { shutdownDelayMs: 1000 } });
    const h = harness(a);
    await h.toRunning();
    h.actor.send({ type: 'update', alloc: stop(a, { desiredTransition: { noShutdownDelay: true } }), time: 2 });
    await flush();
    expect(h.value()).to.equal('{"stopping":"preKillHooks"}');
    expect(h.ctx().delaysSkipped).to.equal(true);
    expect(h.ctx().alloc.desiredStatus).to.equal('stop');
    h.actor.stop();
  });

  it('a non-terminal noShutdownDelay update still runs the update hooks, and takes the alloc', async () => {
    const a = makeAlloc([mockTask('web')]);
    const h = harness(a, { hasUpdateHooks: true });
    await h.toRunning();
    const next = { ...a, allocModifyIndex: 2, desiredTransition: { noShutdownDelay: true } };
    h.actor.send({ type: 'update', alloc: next, time: 2 });
    await flush();
    expect(h.hookKinds()).to.deep.equal(['prerun', 'update']);
    expect(h.ctx().alloc).to.deep.equal(next);
    expect(h.ctx().delaysSkipped).to.equal(true);
    h.actor.stop();
  });

  it("a destroy moves the chart's clock to its time: the kills it sends are stamped with it", async () => {
    const a = makeAlloc([mockTask('web')]);
    const h = harness(a);
    await h.toRunning();
    h.actor.send({ type: 'destroy', time: 500 });
    await flush();
    expect(h.ctx().now).to.equal(500);
    h.hook('preKill').resolve();
    await flush();
    expect(h.value()).to.equal('{"stopping":{"destroying":"killing"}}');
    expect(h.kill.calls).to.have.length(1);
    h.actor.stop();
  });

  it('toTask hands the event to the running task (an appended event reaches its state)', async () => {
    const a = makeAlloc([mockTask('web')]);
    const h = harness(a);
    // Before the tasks exist nothing is sent (and nothing fails).
    h.actor.send({ type: 'toTask', taskName: 'web', event: { type: 'append', event: taskEvent('Early', 0) } });
    await h.toRunning();
    h.actor.send({ type: 'toTask', taskName: 'web', event: { type: 'append', event: taskEvent('Hook Message', 3, { displayMessage: 'hello' }) } });
    await flush();
    const types = h.ctx().taskStates.web!.events.map((e) => e.type);
    expect(types).to.include('Hook Message');
    expect(types).to.not.include('Early');
    h.actor.stop();
  });

  it('a stop before the tasks ran: each task dead, not failed; postrun still runs; no preKill hook (nothing to kill)', async () => {
    const a = makeAlloc([mockTask('web'), mockTask('api')], { previousAllocation: 'prev-1' });
    const h = harness(a);
    h.build.last().resolve();
    await flush();
    expect(h.value()).to.equal('{"waiting-prev":{"waiting":"unbounded"}}');
    h.actor.send({ type: 'update', alloc: stop(a), time: 7 });
    await flush();
    expect(h.value()).to.equal('{"stopping":"postrun"}');
    for (const name of ['web', 'api']) expect(h.ctx().taskStates[name], name).to.deep.include({ state: 'dead', failed: false, finishedAt: 7 });
    h.hook('postrun').resolve();
    await flush();
    expect(h.value()).to.equal('{"stopping":"stopped"}');
    expect(h.hookKinds()).to.deep.equal(['postrun']);
    expect(h.start.calls).to.have.length(0);
    h.actor.stop();
  });

  for (const ends of ['done', 'failed'] as const)
    it(`a destroy after a stop runs neither the preKill nor the postrun hooks again (${ends} the first time): only the destroy hooks`, async () => {
      const a = makeAlloc([mockTask('web')]);
      const h = harness(a);
      const settle = (kind: 'preKill' | 'postrun') => (ends === 'done' ? h.hook(kind).resolve() : h.hook(kind).reject(new Error(`${kind} broke`)));
      await h.toRunning();
      h.actor.send({ type: 'update', alloc: stop(a), time: 2 });
      await flush();
      settle('preKill');
      await flush();
      h.kill.last().resolve({ result: { exitCode: 130, signal: 2 }, time: 3 });
      await flush();
      settle('postrun');
      await flush();
      expect(h.value()).to.equal('{"stopping":"stopped"}');
      expect(h.ctx()).to.deep.include({ preKillDone: true, postrunDone: true });
      h.actor.send({ type: 'destroy', time: 4 });
      await flush();
      expect(h.value()).to.equal('{"stopping":{"destroying":"hooks"}}');
      expect(h.hookKinds()).to.deep.equal(['prerun', 'preKill', 'postrun', 'destroy']);
      h.hook('destroy').resolve();
      await flush();
      expect(h.value()).to.equal('"destroyed"');
    });

  it("a group restart's shutdown_delay moves the chart's clock by the delay before the preTaskRestart hooks", async () => {
    const a = makeAlloc([mockTask('web')], { group: { shutdownDelayMs: 1000 } });
    const h = harness(a);
    await h.toRunning();
    const before = h.ctx().now;
    h.actor.send({ type: 'restartAll', time: before });
    await flush();
    expect(h.value()).to.equal('{"running":{"preRestart":"delay"}}');
    h.clock.increment(1000);
    await flush();
    expect(h.value()).to.equal('{"running":{"preRestart":"hooks"}}');
    expect(h.ctx().now).to.equal(before + 1000);
    h.actor.stop();
  });

  it('a sibling that fails kills the group with the reason: the other task is killed with "Sibling Task Failed"', async () => {
    const a = makeAlloc([mockTask('web'), mockTask('api')], { group: { restartPolicy: { attempts: 0, intervalMs: 1000, delayMs: 10, mode: 'fail' } } });
    const h = harness(a);
    await h.toRunning();
    expect(h.wait.calls).to.have.length(2);
    const api = h.wait.calls.find((c) => (c.input as { taskName?: string }).taskName === 'api')!;
    api.resolve({ result: { exitCode: 1, signal: 0 }, time: 5 });
    await flush();
    expect(h.ctx().killEvent).to.deep.equal({ type: 'Sibling Task Failed', failedSibling: 'api' });
    expect(h.value()).to.equal('{"stopping":"preKillHooks"}');
    h.hook('preKill').resolve();
    await flush();
    const reasons = h.ctx().taskStates.web!.events.map((e) => e.type);
    expect(reasons).to.include('Sibling Task Failed');
    h.actor.stop();
  });

  it('a non-terminal noShutdownDelay update that drops a task still kills it ("update missing task")', async () => {
    const a = makeAlloc([mockTask('web'), mockTask('api')]);
    const h = harness(a);
    await h.toRunning();
    const next = makeAlloc([mockTask('web')], { id: a.id, allocModifyIndex: 2, desiredTransition: { noShutdownDelay: true } });
    h.actor.send({ type: 'update', alloc: next, time: 3 });
    await flush();
    expect(h.ctx().removedTasks).to.deep.equal(['api']);
    expect(h.kill.calls.map((c) => (c.input as { taskName?: string }).taskName)).to.deep.equal(['api']);
    h.actor.stop();
  });

  it('an alloc that arrives to be destroyed, or already told to stop, builds nothing', async () => {
    const a = makeAlloc([mockTask('web')]);
    const destroyed = harness(a, { destroyRequested: true });
    await flush();
    expect(destroyed.build.calls).to.have.length(0);
    expect(destroyed.hookKinds()).to.deep.equal(['destroy']);
    destroyed.actor.stop();
    const stopped = harness(stop(a));
    await flush();
    expect(stopped.build.calls).to.have.length(0);
    expect(stopped.value()).to.equal('{"stopping":"postrun"}');
    stopped.actor.stop();
  });

  it('a destroy before the tasks ran: each task dead, not failed; the destroy hooks run', async () => {
    const a = makeAlloc([mockTask('web')], { previousAllocation: 'prev-1' });
    const h = harness(a);
    h.build.last().resolve();
    await flush();
    h.actor.send({ type: 'destroy', time: 9 });
    await flush();
    expect(h.ctx().taskStates.web).to.deep.include({ state: 'dead', failed: false, finishedAt: 9 });
    expect(h.hookKinds()).to.deep.equal(['destroy']);
    h.actor.stop();
  });

  it('a restored alloc stopped before its tasks were spawned spawns them (gates closed) so the kill reaches the saved run', async () => {
    const a = makeAlloc([mockTask('web')]);
    const handle = { driver: 'stub', id: `${a.id}/web/1`, config: {} as never, startedAt: 0, pid: 1, state: {} } as TaskHandle;
    const h = harness(a, { restoredHandles: { web: handle }, restoring: true });
    expect(h.child(taskActorId(a.id, 'web'))).to.equal(undefined);
    h.actor.send({ type: 'update', alloc: stop(a), time: 2 });
    await flush();
    expect(h.ctx().spawned).to.equal(true);
    expect(h.child(taskActorId(a.id, 'web'))).to.not.equal(undefined);
    expect(h.recover.calls.map((c) => (c.input as { handle?: TaskHandle }).handle)).to.deep.equal([handle]);
    expect(h.start.calls).to.have.length(0);
    h.actor.stop();
  });

  it('a destroy while max_run_duration is armed stops its timer', async () => {
    const a = makeAlloc([mockTask('web')], { jobType: 'batch', createTime: 1000, group: { maxRunDurationMs: 5000 } });
    const h = harness(a);
    await h.toRunning();
    expect(h.child('max-run')).to.not.equal(undefined);
    h.actor.send({ type: 'destroy', time: 3 });
    await flush();
    expect(h.child('max-run')).to.equal(undefined);
    expect(h.ctx().maxRunTimer).to.equal('closed');
    expect(h.timers.every((t) => t.stopped)).to.equal(true);
    h.actor.stop();
  });

  it("updates while stopping are applied and a dropped task noted; noShutdownDelay then cuts the group's delay", async () => {
    const a = makeAlloc([mockTask('web'), mockTask('api')], { group: { shutdownDelayMs: 1000 } });
    const h = harness(a);
    await h.toRunning();
    h.actor.send({ type: 'update', alloc: stop(a), time: 2 });
    await flush();
    expect(h.value()).to.equal('{"stopping":"groupDelay"}');
    const dropped = makeAlloc([mockTask('web')], { id: a.id, desiredStatus: 'stop', allocModifyIndex: 3, group: { shutdownDelayMs: 1000 } });
    h.actor.send({ type: 'update', alloc: dropped, time: 3 });
    await flush();
    expect(h.ctx().alloc.allocModifyIndex).to.equal(3);
    expect(h.ctx().removedTasks).to.deep.equal(['api']);
    expect(h.value()).to.equal('{"stopping":"groupDelay"}');
    const skipping = {
      ...dropped,
      allocModifyIndex: 4,
      desiredTransition: { noShutdownDelay: true },
      job: { ...a.job, taskGroups: [{ ...a.job.taskGroups[0]!, tasks: [] }] },
    };
    h.actor.send({ type: 'update', alloc: skipping, time: 4 });
    await flush();
    expect(h.ctx().alloc.allocModifyIndex).to.equal(4);
    expect(h.ctx().removedTasks).to.deep.equal(['api', 'web']);
    expect(h.ctx().delaysSkipped).to.equal(true);
    expect(h.value()).to.equal('{"stopping":"preKillHooks"}');
    h.actor.stop();
  });

  it('an update while destroying is applied and a dropped task noted', async () => {
    const a = makeAlloc([mockTask('web'), mockTask('api')]);
    const h = harness(a);
    await h.toRunning();
    h.actor.send({ type: 'destroy', time: 2 });
    await flush();
    expect(h.value()).to.equal('{"stopping":{"destroying":"preKillHooks"}}');
    h.actor.send({ type: 'update', alloc: makeAlloc([mockTask('web')], { id: a.id, allocModifyIndex: 3 }), time: 3 });
    await flush();
    expect(h.ctx().alloc.allocModifyIndex).to.equal(3);
    expect(h.ctx().removedTasks).to.deep.equal(['api']);
    h.actor.stop();
  });

  it('a destroy during a stop kills a poststop task that already runs at once (no wait for it to end)', async () => {
    const a = makeAlloc([mockTask('web'), mockTask('post', {}, { lifecycle: { hook: 'poststop' } })]);
    const h = harness(a);
    await h.toRunning();
    const named = (calls: Array<{ input: unknown }>) => calls.map((c) => (c.input as { taskName?: string }).taskName);
    expect(named(h.start.calls)).to.deep.equal(['web']);
    h.actor.send({ type: 'update', alloc: stop(a), time: 2 });
    await flush();
    h.hook('preKill').resolve();
    await flush();
    h.kill.last().resolve({ result: { exitCode: 130, signal: 2 }, time: 3 });
    await flush();
    expect(named(h.start.calls)).to.deep.equal(['web', 'post']);
    h.start.calls[1]!.resolve({ ok: true, handle: { driver: 'stub', id: `${a.id}/post/1`, config: {} as never, startedAt: 3, pid: 2, state: {} }, time: 3 });
    await flush();
    expect(h.value()).to.equal('{"stopping":"poststop"}');
    expect(h.ctx().taskStates.post!.state).to.equal('running');
    h.actor.send({ type: 'destroy', time: 4 });
    await flush();
    expect(named(h.kill.calls)).to.deep.equal(['web', 'post']);
    expect(h.value()).to.equal('{"stopping":{"destroying":"killing"}}');
    h.actor.stop();
  });

  it('while stopping, a later stop update does not restart the stop, and a reconnect is taken as one', async () => {
    const a = makeAlloc([mockTask('web')]);
    const h = harness(a);
    await h.toRunning();
    h.actor.send({ type: 'update', alloc: stop(a), time: 2 });
    await flush();
    expect(h.value()).to.equal('{"stopping":"preKillHooks"}');
    h.actor.send({ type: 'update', alloc: stop(a, { allocModifyIndex: 3 }), time: 3 });
    await flush();
    expect(h.hookKinds()).to.deep.equal(['prerun', 'preKill']);
    expect(h.ctx().alloc.allocModifyIndex).to.equal(3);
    h.actor.send({ type: 'update', alloc: { ...a, allocModifyIndex: 4, clientStatus: 'unknown' }, time: 4 });
    await flush();
    expect(h.ctx().alloc).to.deep.include({ allocModifyIndex: 4, desiredStatus: 'stop' });
    expect(h.ctx().taskStates.web!.events.map((e) => e.type)).to.include('Reconnected');
    h.actor.stop();
  });
});
