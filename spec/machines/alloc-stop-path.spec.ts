import { expect } from 'chai';
import { chartCoverage } from '../support/chart-coverage.ts';
import { createActor, fromCallback, fromPromise, SimulatedClock, type Actor } from 'xstate';
import { allocMachine, type AllocMachineInput } from '../../machines/alloc/index.ts';
import { taskSettingsFor } from '../../machines/policy/task-settings.ts';
import { taskMachine, type ExitOutput, type StartOutput } from '../../machines/task/index.ts';
import type { TaskHandle } from '../../model/task-handle.ts';
import type { Allocation } from '../../model/types.ts';
import { AllocDirInaccessibleError } from '../../model/errors.ts';
import { makeAlloc, mockTask } from '../support/fixtures.ts';

/**
 * The alloc chart with the real task chart, every effect stubbed, on a simulated clock: each
 * task "runs" until killed or until the test ends it; hooks and kills are recorded with the
 * virtual time they happened at.
 */
type HookPlan = 'resolve' | 'reject' | 'hold';

function harness(alloc: Allocation, opts: { hooks?: Partial<Record<string, HookPlan>>; build?: () => Promise<void>; input?: Partial<AllocMachineInput> } = {}) {
  const clock = new SimulatedClock();
  const log: string[] = [];
  const held = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();
  const exits = new Map<string, (o: ExitOutput) => void>();
  const task = taskMachine.provide({
    actors: {
      startTask: fromPromise<StartOutput, { taskName: string }>(async ({ input }) => {
        log.push(`start ${input.taskName}@${clock.now()}`);
        return { ok: true, handle: { driver: 'stub', id: input.taskName, startedAt: clock.now(), state: {} } as unknown as TaskHandle, time: clock.now() };
      }),
      waitTask: fromPromise<ExitOutput, { taskName: string }>(({ input }) => new Promise((resolve) => exits.set(input.taskName, resolve))),
      killTask: fromPromise<ExitOutput, { taskName: string }>(async ({ input }) => {
        log.push(`kill ${input.taskName}@${clock.now()}`);
        return { result: { exitCode: 0, signal: 2 }, time: clock.now() };
      }),
      recoverTask: fromPromise(async () => ({ ok: true as const, time: 0 })),
    } as never,
  });
  const logic = allocMachine.provide({
    actors: {
      buildAllocDir: fromPromise(async () => (opts.build ? opts.build() : undefined)),
      awaitPrevious: fromPromise(async () => ({})),
      migrateData: fromPromise(async () => undefined),
      runHooks: fromPromise<void, { kind: string }>(({ input }) => {
        log.push(`${input.kind}@${clock.now()}`);
        const plan = opts.hooks?.[input.kind] ?? 'resolve';
        if (plan === 'hold') return new Promise<void>((resolve, reject) => held.set(input.kind, { resolve, reject }));
        return plan === 'reject' ? Promise.reject(new Error(`${input.kind} hook failed`)) : Promise.resolve();
      }),
      maxRunTimer: fromCallback<{ type: 'arm'; deadline?: number }, { deadline?: number }>(({ input, sendBack }) => {
        if (input.deadline === undefined) return;
        const deadline = input.deadline;
        const h = clock.setTimeout(() => sendBack({ type: 'maxRunDuration.elapsed', deadline, time: clock.now() }), Math.max(0, deadline - clock.now()));
        return () => clock.clearTimeout(h);
      }),
      task,
    } as never,
  });
  const { roles, tasks } = taskSettingsFor(alloc);
  const input: AllocMachineInput = { alloc, roles, tasks, now: 0, hasWatched: false, ...(opts.input ?? {}) };
  const actor: Actor<typeof allocMachine> = createActor(logic, { inspect: chartCoverage.observe, input, clock }).start();
  const settle = async () => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  const top = () => {
    const v = actor.getSnapshot().value;
    return typeof v === 'string' ? v : Object.keys(v)[0];
  };
  /** Lets a restarted task through its (zero) restart delay on the simulated clock. */
  const tick = async () => {
    await settle();
    clock.increment(0);
    await settle();
  };
  return { clock, actor, log, exits, settle, top, held, tick };
}

const stop = (a: Allocation, over: Partial<Allocation> = {}): Allocation => ({
  ...a,
  desiredStatus: 'stop',
  allocModifyIndex: a.allocModifyIndex + 1,
  ...over,
});

describe('alloc chart: the stop path (stub effects, simulated clock)', () => {
  it('group shutdown_delay, then preKill hooks, then the kills; each task waits its own delay', async () => {
    const alloc = makeAlloc([mockTask('web', {}, { shutdownDelayMs: 300 }), mockTask('api')], { group: { shutdownDelayMs: 1000 } });
    const h = harness(alloc);
    await h.settle();
    expect(h.log).to.deep.equal(['prerun@0', 'start web@0', 'start api@0']);
    h.actor.send({ type: 'update', alloc: stop(alloc), time: 0 });
    await h.settle();
    expect(h.log.slice(3)).to.deep.equal([]);
    h.clock.increment(1000);
    await h.settle();
    expect(h.log.slice(3)).to.deep.equal(['preKill@1000', 'kill api@1000']); // web waits its own 300 ms
    h.clock.increment(300);
    await h.settle();
    expect(h.log.slice(5)).to.deep.equal(['kill web@1300', 'postrun@1300']);
    h.actor.stop();
  });

  it('a destroy skips both delays; poststop tasks then run; postrun, then the destroy hooks', async () => {
    const alloc = makeAlloc([mockTask('web', {}, { shutdownDelayMs: 5000 }), mockTask('post', {}, { lifecycle: { hook: 'poststop' } })], {
      group: { shutdownDelayMs: 5000 },
    });
    const h = harness(alloc);
    await h.settle();
    h.actor.send({ type: 'update', alloc: stop(alloc), time: 0 });
    await h.settle();
    h.actor.send({ type: 'destroy', time: 0 });
    await h.settle();
    expect(h.log.slice(2)).to.deep.equal(['preKill@0', 'kill web@0', 'start post@0']);
    h.exits.get('post')!({ result: { exitCode: 0, signal: 0 }, time: 0 });
    await h.settle();
    expect(h.log.slice(5)).to.deep.equal(['postrun@0', 'destroy@0']);
    expect(h.top()).to.equal('destroyed');
  });

  it('a destroy waits for a poststop task at most maxKillTimeoutMs, then kills it; postrun, then the destroy hooks', async () => {
    const alloc = makeAlloc([mockTask('web'), mockTask('post', {}, { lifecycle: { hook: 'poststop' } })]);
    const h = harness(alloc, { input: { maxKillTimeoutMs: 2000 } });
    await h.settle();
    h.actor.send({ type: 'destroy', time: 0 });
    await h.settle();
    expect(h.log.slice(2)).to.deep.equal(['preKill@0', 'kill web@0', 'start post@0']);
    h.clock.increment(1999);
    await h.settle();
    expect(h.log.slice(5), 'the poststop task still has its time').to.deep.equal([]);
    expect(h.actor.getSnapshot().matches({ stopping: { destroying: 'poststop' } })).to.equal(true);
    h.clock.increment(1);
    await h.settle();
    expect(h.log.slice(5)).to.deep.equal(['kill post@2000', 'postrun@2000', 'destroy@2000']);
    expect(h.top()).to.equal('destroyed');
  });

  it("max_run_duration: complete with Nomad's description at createTime + duration; poststop never starts", async () => {
    const alloc = makeAlloc([mockTask('web'), mockTask('post', {}, { lifecycle: { hook: 'poststop' } })], {
      jobType: 'batch',
      createTime: 1,
      group: { maxRunDurationMs: 500 },
    });
    const h = harness(alloc);
    await h.settle();
    h.clock.increment(500); // the deadline is createTime (1) + 500
    await h.settle();
    expect(h.top()).to.equal('running');
    h.clock.increment(1);
    await h.settle();
    expect(h.top()).to.equal('stopping');
    const ctx = h.actor.getSnapshot().context;
    expect(ctx.statusOverride).to.deep.equal({ status: 'complete', description: 'allocation exceeded max_run_duration' });
    expect(h.log.filter((l) => l.startsWith('start'))).to.deep.equal(['start web@0']);
    expect(ctx.taskStates.web!.events.find((e) => e.type === 'Killing')!.displayMessage).to.equal('allocation exceeded max_run_duration');
    expect(ctx.taskStates.post!.state).to.equal('dead');
    h.actor.stop();
  });

  it('a reconnect appends "Reconnected", takes only the new index, and runs no update hook', async () => {
    const alloc = makeAlloc([mockTask('web')]);
    const h = harness(alloc);
    await h.settle();
    h.actor.send({ type: 'update', alloc: { ...alloc, clientStatus: 'unknown', allocModifyIndex: 9, job: { ...alloc.job, meta: { x: 'y' } } }, time: 5 });
    await h.settle();
    const ctx = h.actor.getSnapshot().context;
    expect(ctx.alloc.allocModifyIndex).to.equal(9);
    expect(ctx.alloc.job.meta).to.equal(undefined);
    expect(ctx.alloc.clientStatus).to.not.equal('unknown');
    expect(ctx.taskStates.web!.events.at(-1)!.type).to.equal('Reconnected');
    expect(h.top()).to.equal('running');
    h.actor.stop();
  });

  it('a restored alloc whose dir is gone fails and is destroyed', async () => {
    const h = harness(makeAlloc([mockTask('web')]), {
      build: () => Promise.reject(new AllocDirInaccessibleError('allocation directory is inaccessible: ENOENT')),
      input: { restoring: true },
    });
    await h.settle();
    expect(h.top()).to.equal('destroyed');
    expect(h.actor.getSnapshot().context.statusOverride).to.deep.equal({ status: 'failed', description: 'allocation directory is inaccessible: ENOENT' });
  });

  it('failing preKill, preTaskRestart and postrun hooks only move on; group restarts asked meanwhile queue', async () => {
    const alloc = makeAlloc([mockTask('web'), mockTask('api')]);
    const h = harness(alloc, { hooks: { preTaskRestart: 'hold', preKill: 'reject', postrun: 'reject' } });
    await h.settle();
    h.actor.send({ type: 'restartAll', time: 0 });
    h.actor.send({ type: 'restartRunning', time: 0 });
    h.actor.send({ type: 'restartAll', time: 0 });
    await h.settle();
    expect(h.actor.getSnapshot().context.pendingRestarts).to.have.length(3);
    h.held.get('preTaskRestart')!.reject(new Error('no'));
    await h.settle();
    expect(h.actor.getSnapshot().context.pendingRestarts).to.have.length(0);
    h.actor.send({ type: 'update', alloc: stop(alloc), time: 0 });
    await h.settle();
    expect(h.log).to.include('preKill@0');
    h.actor.send({ type: 'destroy', time: 0 });
    await h.settle();
    expect(h.top()).to.equal('destroyed');
  });

  it("the alloc and task charts' contexts are plain JSON at every step: no Map, Date, class instance, function or actor", async () => {
    const alloc = makeAlloc([mockTask('web', {}, { shutdownDelayMs: 100 }), mockTask('post', {}, { lifecycle: { hook: 'poststop' } })], {
      group: { shutdownDelayMs: 200 },
    });
    const h = harness(alloc);
    const seen: unknown[] = [];
    const look = () => {
      const snap = h.actor.getSnapshot();
      seen.push(snap.context);
      for (const child of Object.values(snap.children)) {
        const c = (child as { getSnapshot(): { context?: unknown } } | undefined)?.getSnapshot().context;
        if (c !== undefined && (c as { taskName?: string }).taskName !== undefined) seen.push(c);
      }
    };
    const sub = h.actor.subscribe(look);
    await h.settle();
    h.actor.send({ type: 'restartAll', time: 0 });
    await h.tick();
    h.actor.send({ type: 'update', alloc: stop(alloc), time: 0 });
    await h.settle();
    h.clock.increment(300);
    await h.settle();
    sub.unsubscribe();
    expect(h.top()).to.equal('stopping');
    expect(seen.filter((c) => (c as { taskName?: string }).taskName !== undefined).length, 'task contexts seen').to.be.above(0);
    // Plain JSON: null, booleans, finite numbers, strings, arrays and plain objects (an undefined
    // field is an absent one); no Map, Date, class instance, function or actor reference.
    const notPlain = (v: unknown, at: string): string[] => {
      if (v === null || v === undefined || typeof v === 'boolean' || typeof v === 'string') return [];
      if (typeof v === 'number') return Number.isFinite(v) ? [] : [at];
      if (Array.isArray(v)) return v.flatMap((x, i) => notPlain(x, `${at}[${i}]`));
      if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return Object.entries(v).flatMap(([k, x]) => notPlain(x, `${at}.${k}`));
      return [at];
    };
    expect(seen.flatMap((c) => notPlain(c, 'context'))).to.deep.equal([]);
  });

  describe("Nomad's alloc runner, exactly", () => {
    it('an update that moves the leader keeps the kill order of the start: roles are read once, as Nomad reads them', async () => {
      const alloc = makeAlloc([mockTask('web', {}, { leader: true }), mockTask('api')]);
      const h = harness(alloc);
      await h.settle();
      const group = alloc.job.taskGroups[0]!;
      const moved: Allocation = {
        ...alloc,
        allocModifyIndex: 2,
        job: { ...alloc.job, taskGroups: [{ ...group, tasks: [mockTask('web'), mockTask('api', {}, { leader: true })] }] },
      };
      h.actor.send({ type: 'update', alloc: moved, time: 0 });
      await h.settle();
      h.actor.send({ type: 'update', alloc: stop(moved), time: 0 });
      await h.settle();
      expect(h.log.filter((l) => l.startsWith('kill'))).to.deep.equal(['kill web@0', 'kill api@0']);
      h.actor.stop();
    });

    it("two restartAlls queued behind the group's delay revive a finished prestart task once", async () => {
      const alloc = makeAlloc([mockTask('init', {}, { lifecycle: { hook: 'prestart' } }), mockTask('web')], { group: { shutdownDelayMs: 1000 } });
      const h = harness(alloc);
      await h.settle();
      h.exits.get('init')!({ result: { exitCode: 0, signal: 0 }, time: 0 });
      await h.settle();
      expect(h.log.filter((l) => l.startsWith('start'))).to.deep.equal(['start init@0', 'start web@0']);
      h.actor.send({ type: 'restartAll', time: 0 });
      h.actor.send({ type: 'restartAll', time: 0 });
      await h.settle();
      h.clock.increment(1000);
      await h.tick();
      expect(h.log.filter((l) => l.startsWith('start init'))).to.deep.equal(['start init@0', 'start init@1000']);
      h.actor.stop();
    });

    it("one task's restart runs no preTaskRestart hook and waits no group delay (Nomad's RestartTask)", async () => {
      const h = harness(makeAlloc([mockTask('web'), mockTask('api')], { group: { shutdownDelayMs: 1000 } }), { hooks: { preTaskRestart: 'hold' } });
      await h.settle();
      h.actor.send({ type: 'restartTask', taskName: 'web', time: 0 });
      await h.tick();
      expect(h.log.filter((l) => l.startsWith('preTaskRestart'))).to.deep.equal([]);
      expect(h.log.filter((l) => l.startsWith('start web'))).to.have.length(2);
      expect(h.actor.getSnapshot().context.pendingRestarts).to.deep.equal([]);
      h.actor.stop();
    });

    it("a group restart waits the group's shutdown_delay, then the preTaskRestart hooks, then restarts", async () => {
      const h = harness(makeAlloc([mockTask('web')], { group: { shutdownDelayMs: 1000 } }));
      await h.settle();
      for (const type of ['restartAll', 'restartRunning'] as const) {
        const from = h.clock.now();
        h.log.length = 0;
        h.actor.send({ type, time: from });
        await h.settle();
        expect(h.log).to.deep.equal([]);
        h.clock.increment(1000);
        await h.tick();
        expect(h.log).to.deep.equal([`preTaskRestart@${from + 1000}`, `kill web@${from + 1000}`, `start web@${from + 1000}`]);
      }
      h.actor.stop();
    });

    it('noShutdownDelay on a non-terminal update cancels a group delay in progress (and later ones)', async () => {
      const alloc = makeAlloc([mockTask('web')], { group: { shutdownDelayMs: 1000 } });
      const h = harness(alloc);
      await h.settle();
      h.actor.send({ type: 'restartRunning', time: 0 });
      await h.settle();
      h.clock.increment(100);
      h.actor.send({ type: 'update', alloc: { ...alloc, allocModifyIndex: 2, desiredTransition: { noShutdownDelay: true } }, time: 100 });
      await h.tick();
      expect(h.log.slice(2)).to.deep.equal(['preTaskRestart@100', 'kill web@100', 'start web@100']);
      expect(h.actor.getSnapshot().context.delaysSkipped).to.equal(true);
      h.actor.stop();
    });

    it('restart-running leaves dead and waiting tasks alone; restart-all ignores a poststop task not running yet', async () => {
      const h = harness(makeAlloc([mockTask('web'), mockTask('post', {}, { lifecycle: { hook: 'poststop' } })]));
      await h.settle();
      h.actor.send({ type: 'restartAll', time: 0 });
      await h.tick();
      expect(h.log.filter((l) => l.startsWith('start'))).to.deep.equal(['start web@0', 'start web@0']);
      h.actor.send({ type: 'restartRunning', time: 0 });
      await h.tick();
      expect(h.log.filter((l) => l.startsWith('start'))).to.have.length(3);
      expect(h.actor.getSnapshot().context.taskStates.post!.state).to.equal('pending');
      h.actor.stop();
    });

    it('a stop that also drops a task kills it with "update missing task" first: the alloc ends failed', async () => {
      const alloc = makeAlloc([mockTask('web'), mockTask('api')]);
      const h = harness(alloc);
      await h.settle();
      const dropped: Allocation = stop(alloc, { job: { ...alloc.job, taskGroups: [{ ...alloc.job.taskGroups[0]!, tasks: [mockTask('web')] }] } });
      h.actor.send({ type: 'update', alloc: dropped, time: 0 });
      await h.settle();
      const api = h.actor.getSnapshot().context.taskStates.api!;
      expect(api.state).to.equal('dead');
      expect(api.failed).to.equal(true);
      expect(api.events.some((e) => e.details.kill_reason === 'update missing task')).to.equal(true);
      expect(h.actor.getSnapshot().context.taskStates.web!.failed).to.equal(false);
      h.actor.stop();
    });

    it("an alloc that arrives client-terminal still runs its postrun hooks (Nomad's Run)", async () => {
      const h = harness(makeAlloc([mockTask('web')], { clientStatus: 'complete' }));
      await h.settle();
      expect(h.log).to.deep.equal(['postrun@0']);
      expect(h.actor.getSnapshot().matches({ stopping: 'stopped' })).to.equal(true);
      h.actor.stop();
    });

    it('max_run_duration keeps counting during a stop: a deadline in a long shutdown delay still completes the alloc with its reason', async () => {
      const alloc = makeAlloc([mockTask('web')], { jobType: 'batch', createTime: 1, group: { shutdownDelayMs: 5000, maxRunDurationMs: 2000 } });
      const h = harness(alloc);
      await h.settle();
      h.actor.send({ type: 'update', alloc: stop(alloc), time: 0 });
      await h.settle();
      h.clock.increment(2500);
      await h.settle();
      expect(h.actor.getSnapshot().context.statusOverride).to.deep.equal({ status: 'complete', description: 'allocation exceeded max_run_duration' });
      h.clock.increment(2500);
      await h.settle();
      expect(h.log).to.include('kill web@5000');
      expect(h.actor.getSnapshot().matches({ stopping: 'stopped' })).to.equal(true);
      expect(Object.keys(h.actor.getSnapshot().children)).to.not.include('max-run');
      h.actor.stop();
    });
  });

  it('a destroy with failing preKill and postrun hooks still ends; a stale update is ignored meanwhile', async () => {
    const alloc = makeAlloc([mockTask('web')]);
    const h = harness(alloc, { hooks: { preKill: 'reject', postrun: 'reject', destroy: 'hold' } });
    await h.settle();
    h.actor.send({ type: 'update', alloc: { ...alloc, allocModifyIndex: 5 }, time: 0 });
    h.actor.send({ type: 'destroy', time: 0 });
    await h.settle();
    h.actor.send({ type: 'update', alloc: { ...alloc, allocModifyIndex: 2 }, time: 0 }); // stale
    await h.settle();
    expect(h.actor.getSnapshot().context.alloc.allocModifyIndex).to.equal(5);
    h.held.get('destroy')!.resolve();
    await h.settle();
    expect(h.top()).to.equal('destroyed');
  });

  it('while the preTaskRestart hooks run, the group still stops when its tasks die', async () => {
    const one = harness(makeAlloc([mockTask('web')], { group: { restartPolicy: { attempts: 0, intervalMs: 1000, delayMs: 0, mode: 'fail' } } }), {
      hooks: { preTaskRestart: 'hold' },
    });
    await one.settle();
    one.actor.send({ type: 'restartAll', time: 0 });
    await one.settle();
    one.exits.get('web')!({ result: { exitCode: 0, signal: 0 }, time: 1 });
    await one.settle();
    expect(one.top()).to.equal('stopping');
    one.actor.stop();

    const two = harness(
      makeAlloc([mockTask('web'), mockTask('api')], { group: { restartPolicy: { attempts: 0, intervalMs: 1000, delayMs: 0, mode: 'fail' } } }),
      { hooks: { preTaskRestart: 'hold' } },
    );
    await two.settle();
    two.actor.send({ type: 'restartRunning', time: 0 });
    await two.settle();
    two.exits.get('api')!({ result: { exitCode: 1, signal: 0 }, time: 1 });
    await two.settle();
    expect(two.top()).to.equal('stopping');
    expect(two.actor.getSnapshot().context.killEvent).to.deep.equal({ type: 'Sibling Task Failed', failedSibling: 'api' });
    two.actor.stop();
  });

  it('an in-place update hands kept tasks their new kill settings; a skipping kill cuts a delay', async () => {
    const alloc = makeAlloc([mockTask('web', {}, { shutdownDelayMs: 5000 })]);
    const h = harness(alloc);
    await h.settle();
    const next: Allocation = {
      ...alloc,
      allocModifyIndex: 2,
      job: { ...alloc.job, taskGroups: [{ ...alloc.job.taskGroups[0]!, tasks: [mockTask('web', {}, { shutdownDelayMs: 5000, killTimeoutMs: 1234 })] }] },
    };
    h.actor.send({ type: 'update', alloc: next, time: 0 });
    await h.settle();
    const task = h.actor.getSnapshot().children[`task-${alloc.id}-web`] as unknown as {
      getSnapshot(): { context: { killTimeoutMs: number }; value: unknown };
      send(e: unknown): void;
    };
    expect(task.getSnapshot().context.killTimeoutMs).to.equal(1234);
    h.actor.send({ type: 'update', alloc: stop(next), time: 0 });
    await h.settle();
    expect(task.getSnapshot().value).to.equal('shutdownDelay');
    task.send({ type: 'kill', time: 1, skipShutdownDelay: true });
    await h.settle();
    expect(h.log.some((l) => l.startsWith('kill web@'))).to.equal(true);
    h.actor.stop();
  });
});
