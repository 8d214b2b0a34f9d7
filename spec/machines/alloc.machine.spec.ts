import { expect } from 'chai';
import { createActor, fromPromise, SimulatedClock, type AnyActorRef } from 'xstate';
import { allocMachine, taskActorId, type AllocHookKind, type AllocMachineInput } from '../../machines/alloc/index.ts';
import { taskSettingsFor } from '../../machines/policy/task-settings.ts';
import { taskMachine, type ExitOutput, type RecoverOutput, type StartOutput } from '../../machines/task/index.ts';
import type { Allocation, Task } from '../../model/types.ts';
import { chartCoverage, coverageRan } from '../support/chart-coverage.ts';
import { flush, stub } from './support/charts.ts';

const ID = '0000000a-0000-4000-8000-000000000001';

function alloc(tasks: Task[] = [{ name: 'web', driver: 'stub', config: {} }], over: Partial<Allocation> = {}): Allocation {
  return {
    id: ID,
    nodeId: 'n',
    jobId: 'j',
    taskGroup: 'g',
    desiredStatus: 'run',
    clientStatus: 'pending',
    allocModifyIndex: 5,
    job: { id: 'j', type: 'service', taskGroups: [{ name: 'g', tasks, restartPolicy: { attempts: 0, intervalMs: 1000, delayMs: 10, mode: 'fail' } }] },
    ...over,
  };
}

type HookKind = AllocHookKind;

/** The alloc chart alone: stub effects, the real task chart over stub task effects. */
function harness(a: Allocation = alloc(), over: Partial<AllocMachineInput> = {}) {
  const build = stub<void>();
  const awaitPrev = stub<{ previousNodeId?: string }>();
  const migrate = stub<void>();
  const hooks = stub<void, { allocId: string; kind: HookKind }>();
  const start = stub<StartOutput>();
  const wait = stub<ExitOutput>();
  const kill = stub<ExitOutput>();
  const recover = stub<RecoverOutput>();
  const task = taskMachine.provide({ actors: { startTask: start.logic, waitTask: wait.logic, killTask: kill.logic, recoverTask: recover.logic } });
  const logic = allocMachine.provide({
    actors: { buildAllocDir: build.logic, awaitPrevious: awaitPrev.logic, migrateData: migrate.logic, runHooks: hooks.logic, task },
  });
  const { roles, tasks } = taskSettingsFor(a);
  const clock = new SimulatedClock();
  const actor = createActor(logic, {
    clock,
    inspect: chartCoverage.observe,
    input: { alloc: a, roles, tasks, now: 0, hasWatched: !!a.previousAllocation, ...over },
  }).start();
  const hook = (kind: HookKind) => {
    const c = [...hooks.calls].reverse().find((x) => x.input.kind === kind);
    if (!c) throw new Error(`no ${kind} hook call`);
    return c;
  };
  return {
    actor,
    clock,
    build,
    awaitPrev,
    migrate,
    hooks,
    start,
    wait,
    kill,
    hook,
    value: () => JSON.stringify(actor.getSnapshot().value),
    ctx: () => actor.getSnapshot().context,
    task: (name = 'web') => actor.getSnapshot().children[taskActorId(ID, name)] as AnyActorRef | undefined,
    /** Runs the happy path to a running task. */
    async toRunning() {
      build.last().resolve();
      await flush();
      migrate.last().resolve();
      await flush();
      hook('prerun').resolve();
      await flush();
      start.last().resolve({ ok: true, handle: { driver: 'stub', id: `${ID}/web/1`, config: {} as never, startedAt: 0, pid: 1, state: {} }, time: 1 });
      await flush();
    },
  };
}

describe('alloc chart (pure, stub actors, simulated clock)', () => {
  before(() => coverageRan.add('alloc.machine'));

  it('an alloc without update hooks has no update queue child (an idle child per alloc costs memory)', async () => {
    const h = harness(alloc());
    await h.toRunning();
    expect(Object.keys(h.actor.getSnapshot().children)).to.not.include('updates');
  });

  it('update hooks run one update at a time: later updates wait in one slot; a failed hook only moves on', async () => {
    const h = harness(alloc(), { hasUpdateHooks: true });
    // "Update hooks running" is the update queue child's state, not a flag of the alloc chart.
    const queue = () => (h.actor.getSnapshot().children.updates as AnyActorRef).getSnapshot() as { value: string; context: { queued?: Allocation } };
    await h.toRunning();
    expect(queue().value).to.equal('idle');
    h.actor.send({ type: 'update', alloc: alloc(undefined, { allocModifyIndex: 6 }), time: 2 });
    await flush();
    expect(h.hook('update').input).to.deep.equal({ allocId: ID, kind: 'update' });
    expect(queue().value).to.equal('hooking');
    h.actor.send({ type: 'update', alloc: alloc(undefined, { allocModifyIndex: 8 }), time: 3 });
    h.actor.send({ type: 'update', alloc: alloc(undefined, { allocModifyIndex: 7 }), time: 3 }); // lower than the queued one
    expect(h.ctx().alloc.allocModifyIndex).to.equal(6);
    expect(queue().context.queued?.allocModifyIndex).to.equal(8);
    const first = h.hook('update');
    first.resolve();
    await flush();
    expect(h.ctx().alloc.allocModifyIndex).to.equal(8);
    expect(h.hook('update')).to.not.equal(first); // the queued update ran its own hooks
    h.hook('update').reject(new Error('reported, not fatal'));
    await flush();
    expect(queue().value).to.equal('idle');
    expect(h.value()).to.equal('{"running":"tasks"}');
    h.actor.send({ type: 'update', alloc: alloc(undefined, { desiredStatus: 'stop', allocModifyIndex: 9 }), time: 4 });
    await flush();
    expect(h.value()).to.equal('{"stopping":"preKillHooks"}');
    expect(h.hooks.calls.filter((c) => c.input.kind === 'update')).to.have.length(2); // a stop runs none
  });

  it('builds, waits, migrates, runs prerun hooks, starts its task; a stop kills it and runs postrun', async () => {
    const h = harness();
    expect(h.value()).to.equal('"pending"');
    await h.toRunning();
    expect(h.value()).to.equal('{"running":"tasks"}');
    h.actor.send({ type: 'update', alloc: alloc(undefined, { desiredStatus: 'stop', allocModifyIndex: 6 }), time: 2 });
    await flush();
    expect(h.value()).to.equal('{"stopping":"preKillHooks"}'); // Nomad's killTasks runs PreKill first
    h.hook('preKill').resolve();
    await flush();
    expect(h.value()).to.equal('{"stopping":"killing"}');
    h.kill.last().resolve({ result: { exitCode: 130, signal: 2 }, time: 3 });
    await flush();
    expect(h.value()).to.equal('{"stopping":"postrun"}');
    h.hook('postrun').reject(new Error('only reported'));
    await flush();
    expect(h.value()).to.equal('{"stopping":"stopped"}');
    expect(h.ctx().taskStates.web!.state).to.equal('dead');
  });

  it('an update older than the applied one is ignored; equal or newer applies', async () => {
    const h = harness();
    h.actor.send({ type: 'update', alloc: alloc(undefined, { desiredStatus: 'stop', allocModifyIndex: 4 }), time: 1 });
    await flush();
    expect(h.value()).to.equal('"pending"');
    expect(h.ctx().alloc.allocModifyIndex).to.equal(5);
    h.actor.send({ type: 'update', alloc: alloc(undefined, { allocModifyIndex: 7 }), time: 1 });
    await flush();
    expect(h.ctx().alloc.allocModifyIndex).to.equal(7);
  });

  it('a failed alloc dir build is a setup failure: every task dead and failed, nothing started', async () => {
    const h = harness();
    h.build.last().reject(new Error('disk full'));
    await flush();
    expect(h.value()).to.match(/stopping/);
    expect(h.ctx().setupError).to.match(/disk full/);
    expect(h.ctx().taskStates.web).to.include({ state: 'dead' });
    expect(h.start.calls).to.have.length(0);
  });

  it('a failed wait for previous allocs, a failed migration and a failed prerun hook each stop the alloc', async () => {
    const w = harness(alloc(undefined, { previousAllocation: '0000000a-0000-4000-8000-000000000000' }));
    w.build.last().resolve();
    await flush();
    expect(w.value()).to.equal('{"waiting-prev":{"waiting":"unbounded"}}');
    w.awaitPrev.last().reject(new Error('watcher broke'));
    await flush();
    expect(w.value()).to.match(/stopping/);

    const m = harness();
    m.build.last().resolve();
    await flush();
    m.migrate.last().reject(new Error('cannot rebuild'));
    await flush();
    expect(m.ctx().setupError).to.match(/cannot rebuild/);

    const p = harness();
    p.build.last().resolve();
    await flush();
    p.migrate.last().resolve();
    await flush();
    p.hook('prerun').reject(new Error('hook says no'));
    await flush();
    expect(p.ctx().setupError).to.match(/hook says no/);
    expect(p.start.calls).to.have.length(0);
  });

  it('the bound on waiting for previous allocs fires on the clock', async () => {
    const h = harness(alloc(undefined, { previousAllocation: '0000000a-0000-4000-8000-000000000000' }), { prevAllocWaitTimeoutMs: 5000 });
    h.build.last().resolve();
    await flush();
    h.clock.increment(4999);
    await flush();
    expect(h.value()).to.equal('{"waiting-prev":{"waiting":"bounded"}}');
    h.clock.increment(1);
    await flush();
    expect(h.value()).to.match(/stopping/);
    expect(h.ctx().setupError).to.match(/timed out after 5000ms/);
  });

  it('destroy kills, runs destroy hooks (their failure too ends in destroyed); a second destroy and an update wait', async () => {
    const h = harness();
    await h.toRunning();
    h.actor.send({ type: 'destroy', time: 5 });
    await flush();
    expect(h.value()).to.equal('{"stopping":{"destroying":"preKillHooks"}}');
    h.hook('preKill').resolve();
    await flush();
    expect(h.value()).to.equal('{"stopping":{"destroying":"killing"}}');
    h.actor.send({ type: 'destroy', time: 6 });
    h.actor.send({ type: 'update', alloc: alloc(undefined, { allocModifyIndex: 9 }), time: 6 });
    await flush();
    expect(h.ctx().alloc.allocModifyIndex).to.equal(9);
    expect(h.kill.calls).to.have.length(1);
    h.kill.last().resolve({ result: { exitCode: 137, signal: 9 }, time: 7 });
    await flush();
    expect(h.value()).to.equal('{"stopping":{"destroying":"postrun"}}'); // Nomad's Run ends with postrun
    h.hook('postrun').resolve();
    await flush();
    h.hook('destroy').reject(new Error('hook broke'));
    await flush();
    expect(h.value()).to.equal('"destroyed"');
    expect(h.actor.getSnapshot().status).to.equal('done');
  });

  it('update hooks run one update at a time: a later update waits in the slot, a failed hook does not stop the next', async () => {
    const h = harness(alloc(), { hasUpdateHooks: true });
    await h.toRunning();
    h.actor.send({ type: 'update', alloc: alloc(undefined, { allocModifyIndex: 6 }), time: 2 });
    await flush();
    expect(h.hook('update').input).to.deep.include({ kind: 'update' });
    h.actor.send({ type: 'update', alloc: alloc(undefined, { allocModifyIndex: 8 }), time: 3 });
    h.actor.send({ type: 'update', alloc: alloc(undefined, { allocModifyIndex: 7 }), time: 3 });
    await flush();
    expect(h.ctx().alloc.allocModifyIndex).to.equal(6); // the others wait for the hook
    h.hook('update').reject(new Error('hook failed'));
    await flush();
    expect(h.ctx().alloc.allocModifyIndex).to.equal(8); // the newest of the slot, not the last sent
    h.hook('update').resolve();
    await flush();
    expect(h.hooks.calls.filter((c) => c.input.kind === 'update')).to.have.length(2);
  });

  it('restartAll re-runs every task from the first stage', async () => {
    const h = harness();
    await h.toRunning();
    h.actor.send({ type: 'restartAll', time: 3, reason: 'asked' });
    await flush();
    expect(h.kill.calls).to.have.length(0); // the preTaskRestart hooks come first
    h.hook('preTaskRestart').resolve();
    await flush();
    expect(h.kill.calls).to.have.length(1);
    h.kill.last().resolve({ result: { exitCode: 130, signal: 2 }, time: 4 });
    await flush();
    h.clock.increment(0);
    await flush();
    expect(h.start.calls).to.have.length(2);
  });

  it('an alloc that arrives client-terminal builds nothing and starts nothing', async () => {
    const h = harness(alloc(undefined, { clientStatus: 'complete' }));
    await flush();
    expect(h.build.calls).to.have.length(0);
    expect(h.hooks.calls.filter((c) => c.input.kind === 'prerun')).to.have.length(0);
    expect(h.start.calls).to.have.length(0);
  });

  it('an effect the runtime did not provide fails with MissingActorError, naming it', async () => {
    const { roles, tasks } = taskSettingsFor(alloc());
    const actor = createActor(allocMachine.provide({ actors: { task: fromPromise(async () => {}) } }), {
      input: { alloc: alloc(), roles, tasks, now: 0, hasWatched: false },
    }).start();
    await flush();
    const snap = actor.getSnapshot();
    actor.stop();
    expect(snap.context.setupError).to.match(/alloc chart: actor "buildAllocDir" was not provided/);
  });
});
