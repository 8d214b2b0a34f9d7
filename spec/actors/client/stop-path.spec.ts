import { expect } from 'chai';
import { existsSync, rmSync } from 'node:fs';
import { mountsUnder, unmount } from '../../../actors/allocdir/mounts.ts';
import type { RunnerHook } from '../../../actors/runner/hooks.ts';
import type { Allocation, TaskEvent } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { record, useTempClients, viewWhere } from '../../support/temp-client.ts';

const stopOf = (a: Allocation, over: Partial<Allocation> = {}): Allocation => ({
  ...a,
  desiredStatus: 'stop',
  allocModifyIndex: a.allocModifyIndex + 1,
  ...over,
});
const events = (a: Allocation, task: string): TaskEvent[] => a.taskStates![task]!.events;
const types = (a: Allocation, task: string) => events(a, task).map((e) => e.type);
const first = (a: Allocation, task: string, type: string) => events(a, task).find((e) => e.type === type);

describe('client: shutdown_delay', () => {
  const newClient = useTempClients();

  it("a task waits its shutdown_delay before the kill, pending, with Nomad's event", async () => {
    const client = newClient();
    const alloc = makeAlloc([mockTask('web', { run_for: '1h' }, { shutdownDelayMs: 250 })]);
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
    client.updateAlloc(stopOf(alloc));
    await viewWhere(client, r, (a) => types(a, 'web').includes('Waiting for shutdown delay'));
    const during = r.alloc();
    expect(during.taskStates!.web!.state).to.equal('pending'); // as Nomad's handleKill sets it
    expect(first(during, 'web', 'Waiting for shutdown delay')!.displayMessage).to.equal('Waiting for shutdown_delay of 250ms before killing the task.');
    expect(types(during, 'web')).not.to.include('Killed');
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    const done = r.alloc();
    expect(types(done, 'web').slice(-4)).to.deep.equal(['Killing', 'Waiting for shutdown delay', 'Terminated', 'Killed']);
    expect(first(done, 'web', 'Terminated')!.time - first(done, 'web', 'Waiting for shutdown delay')!.time).to.be.at.least(240);
  });

  it("the group's shutdown_delay is waited once, before the preKill hooks and the first kill", async () => {
    let hookAt = 0;
    const client = newClient({ hooks: [{ name: 'prekill', preKill: async () => void (hookAt = Date.now()) }] });
    const alloc = makeAlloc([mockTask('web', { run_for: '1h' }), mockTask('api', { run_for: '1h' })], { group: { shutdownDelayMs: 250 } });
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running' && a.taskStates!.api!.state === 'running');
    const stoppedAt = Date.now();
    client.updateAlloc(stopOf(alloc));
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    expect(hookAt - stoppedAt).to.be.at.least(240);
    for (const t of ['web', 'api']) expect(first(r.alloc(), t, 'Killing')!.time - stoppedAt).to.be.at.least(240);
    expect(types(r.alloc(), 'web')).not.to.include('Waiting for shutdown delay'); // the group's wait has no task event
  });

  it('noShutdownDelay on the stop skips both delays, with "Skipping shutdown delay"', async () => {
    const client = newClient();
    const alloc = makeAlloc([mockTask('web', { run_for: '1h' }, { shutdownDelayMs: 60_000 })], { group: { shutdownDelayMs: 60_000 } });
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
    client.updateAlloc(stopOf(alloc, { desiredTransition: { noShutdownDelay: true } }));
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    const skip = first(r.alloc(), 'web', 'Skipping shutdown delay')!;
    expect(skip.displayMessage).to.equal('Skipping shutdown_delay of 1m0s before killing the task.');
    expect(types(r.alloc(), 'web')).not.to.include('Waiting for shutdown delay');
  });

  it('an update with noShutdownDelay cuts a delay already being waited out', async () => {
    const client = newClient();
    const alloc = makeAlloc([mockTask('web', { run_for: '1h' }, { shutdownDelayMs: 60_000 })]);
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
    const stop = stopOf(alloc);
    client.updateAlloc(stop);
    await viewWhere(client, r, (a) => types(a, 'web').includes('Waiting for shutdown delay'));
    client.updateAlloc({ ...stop, allocModifyIndex: stop.allocModifyIndex + 1, desiredTransition: { noShutdownDelay: true } });
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    expect(types(r.alloc(), 'web')).to.include('Killed');
  });

  it('a destroy does not wait out a delay (group or task)', async () => {
    const client = newClient();
    const alloc = makeAlloc([mockTask('web', { run_for: '1h' }, { shutdownDelayMs: 60_000 })], { group: { shutdownDelayMs: 60_000 } });
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
    client.updateAlloc(stopOf(alloc));
    await r.waitFor('stopping');
    const t0 = Date.now();
    await r.destroy();
    expect(Date.now() - t0).to.be.below(5000);
    expect(r.alloc().taskStates!.web!.state).to.equal('dead');
  });

  it('a destroy also cuts a task delay already begun', async () => {
    const client = newClient();
    const alloc = makeAlloc([mockTask('web', { run_for: '1h' }, { shutdownDelayMs: 60_000 })]);
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
    client.updateAlloc(stopOf(alloc));
    await viewWhere(client, r, (a) => types(a, 'web').includes('Waiting for shutdown delay'));
    await r.destroy();
    expect(types(r.alloc(), 'web')).to.include('Killed');
  });
});

describe('client: task changes on update', () => {
  const newClient = useTempClients();

  it('a task the update drops is killed with "update missing task"; it fails, so its siblings go (as in Nomad)', async () => {
    const client = newClient();
    const alloc = makeAlloc([mockTask('web', { run_for: '1h' }), mockTask('side', { run_for: '1h' })]);
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running' && a.taskStates!.side!.state === 'running');
    const next: Allocation = {
      ...alloc,
      allocModifyIndex: 2,
      job: { ...alloc.job, taskGroups: [{ ...alloc.job.taskGroups[0]!, tasks: [alloc.job.taskGroups[0]!.tasks[0]!] }] },
    };
    client.updateAlloc(next);
    await viewWhere(client, r, (a) => a.clientStatus === 'failed');
    const killed = first(r.alloc(), 'side', 'Killed')!;
    expect(killed.details).to.include({ kill_reason: 'update missing task', fails_task: 'true' });
    expect(types(r.alloc(), 'side')).not.to.include('Killing');
    expect(r.alloc().taskStates!.side!.failed).to.equal(true);
    expect(first(r.alloc(), 'web', 'Sibling Task Failed')!.details.failed_sibling).to.equal('side');
  });

  it('a task dropped before it started never starts', async () => {
    const client = newClient();
    const prev = client.addAlloc(makeAlloc([mockTask('web', { run_for: '1h' })]));
    await prev.waitFor('running');
    const alloc = makeAlloc([mockTask('web', { run_for: '1h' }), mockTask('side', { run_for: '1h' })], { previousAllocation: prev.allocId });
    const r = client.addAlloc(alloc);
    await r.waitFor('waiting-prev');
    client.updateAlloc({
      ...alloc,
      allocModifyIndex: 2,
      job: { ...alloc.job, taskGroups: [{ ...alloc.job.taskGroups[0]!, tasks: [alloc.job.taskGroups[0]!.tasks[0]!] }] },
    });
    await viewWhere(client, r, (a) => a.taskStates!.side!.state === 'dead');
    await r.destroy();
    await prev.destroy();
    expect(types(r.alloc(), 'side')).not.to.include('Started');
  });

  it('update hooks see the new alloc; a kept task takes its new definition at its next start', async () => {
    const seen: Allocation[] = [];
    // The hook tells when it ran: it runs after the view that carries the update was sent.
    let hookRan!: () => void;
    const ran = new Promise<void>((resolve) => (hookRan = resolve));
    const client = newClient({
      hooks: [
        {
          name: 'watch',
          update: async (ctx) => {
            seen.push(ctx.alloc);
            hookRan();
          },
        },
      ],
    });
    const alloc = makeAlloc([mockTask('web', { run_for: '1h', stdout_string: 'v1\n' })]);
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
    const v2 = mockTask('web', { run_for: '1h', stdout_string: 'v2\n' }, { killTimeoutMs: 1234 });
    const next: Allocation = {
      ...alloc,
      allocModifyIndex: 2,
      job: { ...alloc.job, meta: { v: '2' }, taskGroups: [{ ...alloc.job.taskGroups[0]!, tasks: [v2] }] },
    };
    client.updateAlloc(next);
    await ran;
    expect(seen).to.have.length(1);
    expect(seen[0]!.allocModifyIndex).to.equal(2);
    expect(seen[0]!.job.meta).to.deep.equal({ v: '2' });
    expect(r.alloc().taskStates!.web!.restarts).to.equal(0); // running process left alone
    await r.restartTask('web');
    let log = '';
    const ctl = new AbortController();
    for await (const c of r.logs('web', 'stdout', { follow: true, signal: ctl.signal })) {
      log += c.toString();
      if (log.includes('v2')) ctl.abort();
    }
    expect(log).to.equal('v1\nv2\n');
    client.updateAlloc(stopOf(next));
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    expect(first(r.alloc(), 'web', 'Killing')!.details.kill_timeout).to.equal('1.234s');
  });
});

describe('client: poststop tasks on destroy', () => {
  const newClient = useTempClients();

  it('a destroy of a running alloc kills the main tasks, lets poststop run, runs postrun, then the destroy hooks', async () => {
    const calls: string[] = [];
    const hook: RunnerHook = {
      name: 'order',
      preKill: async () => void calls.push('preKill'),
      postrun: async () => void calls.push('postrun'),
      destroy: async () => void calls.push('destroy'),
    };
    const client = newClient({ hooks: [hook] });
    const evs = record(client, 'task.event');
    const alloc = makeAlloc([mockTask('web', { run_for: '1h' }), mockTask('post', { run_for: '50ms' }, { lifecycle: { hook: 'poststop' } })]);
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
    await r.destroy();
    const post = evs.items.filter((m) => m.task === 'post').map((m) => m.event.type);
    expect(post).to.include.members(['Started', 'Terminated']);
    expect(post).not.to.include('Killed');
    expect(r.alloc().taskStates!.post!.failed).to.equal(false);
    expect(calls).to.deep.equal(['preKill', 'postrun', 'destroy']);
  });

  it('a destroy before the tasks started runs no task at all', async () => {
    const client = newClient();
    const evs = record(client, 'task.event');
    const r = client.addAlloc(makeAlloc([mockTask('web', { run_for: '1h' }), mockTask('post', { run_for: '50ms' }, { lifecycle: { hook: 'poststop' } })]));
    await r.destroy();
    expect(evs.items.map((m) => m.event.type)).not.to.include('Started');
  });
});

describe('client: hook kinds', () => {
  const newClient = useTempClients();

  it("preKill on a stop (once), preTaskRestart before a group restart (not one task's), shutdown on client shutdown; in hook order", async () => {
    const calls: string[] = [];
    const mk = (name: string): RunnerHook => ({
      name,
      preKill: async () => void calls.push(`${name}.preKill`),
      preTaskRestart: async () => void calls.push(`${name}.preTaskRestart`),
      shutdown: async () => void calls.push(`${name}.shutdown`),
    });
    const client = newClient({ hooks: [mk('a'), mk('b')] });
    const alloc = makeAlloc([mockTask('web', { run_for: '1h' })]);
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
    // One task's restart runs no restart hook (Nomad's RestartTask); a group restart does.
    await r.restartTask('web');
    expect(calls).to.deep.equal([]);
    expect(types(r.alloc(), 'web')).to.include('Restart Signaled');
    await r.restartRunning();
    await viewWhere(client, r, (a) => a.taskStates!.web!.restarts === 2 && a.taskStates!.web!.state === 'running');
    expect(calls).to.deep.equal(['a.preTaskRestart', 'b.preTaskRestart']);
    client.updateAlloc(stopOf(alloc));
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    expect(calls.slice(2)).to.deep.equal(['a.preKill', 'b.preKill']);
    const r2 = client.addAlloc(makeAlloc([mockTask('web', { run_for: '1h' })]));
    await viewWhere(client, r2, (a) => a.taskStates!.web!.state === 'running');
    await client.shutdown();
    expect(calls.slice(4).sort()).to.deep.equal(['a.shutdown', 'a.shutdown', 'b.shutdown', 'b.shutdown']);
  });

  it('preKill also runs when the tasks ended by themselves', async () => {
    const calls: string[] = [];
    let postrun!: () => void;
    const ran = new Promise<void>((resolve) => (postrun = resolve));
    const client = newClient({
      hooks: [{ name: 'p', preKill: async () => void calls.push('preKill'), postrun: async () => (calls.push('postrun'), postrun()) }],
    });
    client.addAlloc(makeAlloc([mockTask('web', { run_for: '10ms' })], { jobType: 'batch' }));
    await ran;
    expect(calls).to.deep.equal(['preKill', 'postrun']);
  });

  it('a failing preTaskRestart, preKill or shutdown hook is published as hook.error with its kind, and the alloc goes on', async () => {
    const fail = (kind: string) => async () => {
      throw new Error(`${kind} broke`);
    };
    const client = newClient({ hooks: [{ name: 'h', preTaskRestart: fail('preTaskRestart'), preKill: fail('preKill'), shutdown: fail('shutdown') }] });
    const errors = record(client, 'hook.error');
    const alloc = makeAlloc([mockTask('web', { run_for: '1h' })]);
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
    await r.restartAll();
    await viewWhere(client, r, (a) => a.taskStates!.web!.restarts === 1 && a.taskStates!.web!.state === 'running');
    client.updateAlloc(stopOf(alloc));
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    await client.shutdown();
    expect(errors.items.map((m) => [m.allocId === r.allocId, m.hook, m.kind, m.error])).to.deep.equal([
      [true, 'h', 'preTaskRestart', 'pre-task-restart hook "h" failed: preTaskRestart broke'],
      [true, 'h', 'preKill', 'pre-kill hook "h" failed: preKill broke'],
      [true, 'h', 'shutdown', 'shutdown hook "h" failed: shutdown broke'],
    ]);
  });
});

describe('client: max_run_duration', () => {
  const newClient = useTempClients();

  it("stops a batch alloc at createTime + max_run_duration: complete, Nomad's description, poststop never starts", async () => {
    const client = newClient();
    const evs = record(client, 'task.event');
    const alloc = makeAlloc([mockTask('web', { run_for: '1h' }), mockTask('post', { run_for: '10ms' }, { lifecycle: { hook: 'poststop' } })], {
      jobType: 'batch',
      createTime: Date.now(),
      group: { maxRunDurationMs: 200 },
    });
    const r = client.addAlloc(alloc);
    await r.waitFor('stopping');
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'dead' && a.taskStates!.post!.state === 'dead');
    const a = r.alloc();
    expect(a.clientStatus).to.equal('complete');
    expect(a.clientDescription).to.equal('allocation exceeded max_run_duration');
    expect(first(a, 'web', 'Killing')!.displayMessage).to.equal('allocation exceeded max_run_duration');
    expect(evs.items.filter((m) => m.task === 'post').map((m) => m.event.type)).not.to.include('Started');
    expect(first(a, 'web', 'Killing')!.time - alloc.createTime!).to.be.at.least(190);
  });

  it('a deadline already past stops it at once; a service job has none; an update moves it', async () => {
    const client = newClient();
    const late = client.addAlloc(
      makeAlloc([mockTask('web', { run_for: '1h' })], { jobType: 'batch', createTime: Date.now() - 10_000, group: { maxRunDurationMs: 1000 } }),
    );
    await viewWhere(client, late, (a) => a.clientDescription === 'allocation exceeded max_run_duration');
    const service = makeAlloc([mockTask('web', { run_for: '1h' })], { jobType: 'service', createTime: Date.now() - 10_000, group: { maxRunDurationMs: 1000 } });
    const s = client.addAlloc(service);
    await viewWhere(client, s, (a) => a.taskStates!.web!.state === 'running');
    expect(s.state()).to.equal('running');
    const batch = makeAlloc([mockTask('web', { run_for: '1h' })], { jobType: 'batch', createTime: Date.now(), group: { maxRunDurationMs: 3_600_000 } });
    const b = client.addAlloc(batch);
    await viewWhere(client, b, (a) => a.taskStates!.web!.state === 'running');
    client.updateAlloc({ ...batch, allocModifyIndex: 2, job: { ...batch.job, taskGroups: [{ ...batch.job.taskGroups[0]!, maxRunDurationMs: 100 }] } });
    await viewWhere(client, b, (a) => a.clientDescription === 'allocation exceeded max_run_duration');
  });
});

describe('client: max_run_duration while waiting', () => {
  const newClient = useTempClients();

  it('is armed before the wait for a previous alloc, as Nomad arms it in prerun', async () => {
    const client = newClient();
    const evs = record(client, 'task.event');
    const prev = client.addAlloc(makeAlloc([mockTask('web', { run_for: '1h' })]));
    await prev.waitFor('running');
    const r = client.addAlloc(
      makeAlloc([mockTask('web', { run_for: '1h' })], {
        jobType: 'batch',
        createTime: Date.now(),
        previousAllocation: prev.allocId,
        group: { maxRunDurationMs: 150 },
      }),
    );
    await r.waitFor('stopping');
    expect(r.alloc().clientDescription).to.equal('allocation exceeded max_run_duration');
    expect(evs.items.filter((m) => m.allocId === r.allocId).map((m) => m.event.type)).not.to.include('Started');
    expect(prev.state()).to.equal('running');
  });
});

describe('client: disconnected clients', () => {
  const newClient = useTempClients();

  it('an update marking the alloc unknown with a higher index reconnects it: Reconnected, tasks untouched, real status back', async () => {
    const calls: string[] = [];
    let hookRan!: () => void;
    const ran = new Promise<void>((resolve) => (hookRan = resolve));
    const client = newClient({
      hooks: [
        {
          name: 'u',
          update: async () => {
            calls.push('update');
            hookRan();
          },
        },
      ],
    });
    const updates = record(client, 'alloc.updated');
    const alloc = makeAlloc([mockTask('web', { run_for: '1h' })], { group: { disconnect: { lostAfterMs: 60_000 } } });
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
    const startedAt = r.alloc().taskStates!.web!.startedAt;
    client.updateAlloc({ ...alloc, clientStatus: 'unknown', allocModifyIndex: 5 });
    await viewWhere(client, r, (a) => types(a, 'web').includes('Reconnected'));
    const a = r.alloc();
    expect(first(a, 'web', 'Reconnected')!.displayMessage).to.equal('Client reconnected');
    expect(a.clientStatus).to.equal('running');
    expect(a.allocModifyIndex).to.equal(5);
    expect(a.taskStates!.web!).to.include({ state: 'running', restarts: 0, startedAt });
    expect(updates.items.at(-1)!.alloc.clientStatus).to.equal('running'); // the servers hear the truth
    expect(calls).to.deep.equal([]); // a reconnect is not an update
    // A stale "unknown" is an ordinary update (and never stops anything).
    client.updateAlloc({ ...alloc, clientStatus: 'unknown', allocModifyIndex: 5 });
    await ran;
    expect(calls).to.deep.equal(['update']);
    expect(r.alloc().taskStates!.web!.state).to.equal('running');
  });
});

describe('client: restore of an inaccessible alloc dir', () => {
  const newClient = useTempClients();

  it('fails the alloc ("allocation directory is inaccessible") and destroys it instead of rebuilding', async () => {
    const first = newClient();
    const r = first.addAlloc(makeAlloc([mockTask('web', { run_for: '1h' })]));
    await viewWhere(first, r, (a) => a.taskStates!.web!.state === 'running');
    const dir = r.allocDir.dir;
    await first.shutdown();
    for (const m of await mountsUnder(dir)) await unmount(m, { lazy: true }); // the tmpfs secrets (root)
    rmSync(dir, { recursive: true, force: true });
    const second = newClient({ dataDir: first.dataDir });
    const updates = record(second, 'alloc.updated');
    const [restored] = await second.restore();
    await restored!.waitFor('destroyed');
    const failed = updates.items.map((m) => m.alloc).find((a) => a.clientStatus === 'failed')!;
    expect(failed.clientDescription).to.match(/^allocation directory is inaccessible: ENOENT/);
    expect(existsSync(dir)).to.equal(false);
    expect(second.runner(r.allocId)).to.equal(undefined);
  });
});
