import { expect } from 'chai';
import type { Allocation, Task } from '../../../model/types.ts';
import { TaskNotRunningError, TaskNotFoundError } from '../../../model/errors.ts';
import type { AllocRunner, Client } from '../../../actors/client/types.ts';
import { createClient } from '../../../actors/client/client.ts';
import { readTaskLogs } from '../../../actors/drivers/logs/reader.ts';
import { makeAlloc } from '../../support/fixtures.ts';
import { record, useTempClients, viewWhere } from '../../support/temp-client.ts';
import { until } from '../../support/until.ts';
import { mountsUnder, unmount } from '../../../actors/allocdir/mounts.ts';
import { rmSync } from 'node:fs';

const sh = (name: string, script: string, extra: Partial<Task> = {}): Task => ({
  name,
  driver: 'raw_exec',
  config: { command: '/bin/sh', args: ['-c', script] },
  killTimeoutMs: 2000,
  ...extra,
});
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** Reads a task's stdout until `pred` holds (follow mode; no sleeping). */
async function stdoutUntil(r: AllocRunner, task: string, pred: (text: string) => boolean): Promise<string> {
  const ctl = new AbortController();
  let text = '';
  for await (const chunk of r.logs(task, 'stdout', { follow: true, signal: ctl.signal })) {
    text += chunk.toString();
    if (pred(text)) {
      ctl.abort();
      break;
    }
  }
  return text;
}
const pidOf = (r: AllocRunner, task: string) => {
  const child = (
    r as unknown as { actor: { getSnapshot(): { children: Record<string, { getSnapshot(): { context: { handle?: { pid?: number } } } }> } } }
  ).actor.getSnapshot().children[`task-${r.allocId}-${task}`];
  return child?.getSnapshot().context.handle?.pid;
};

describe('client: real processes (raw_exec)', function () {
  this.timeout(20_000);
  const newClient = useTempClients();
  const run = async (client: Client, tasks: Task[], over: Partial<Allocation> = {}) => {
    const r = client.addAlloc(makeAlloc(tasks, over));
    await viewWhere(client, r, (a) => Object.values(a.taskStates!).every((s) => s.state === 'running'));
    return r;
  };

  it('runs a process with Nomad env vars, logs it, and stops it with its kill signal', async () => {
    const client = newClient();
    const r = await run(client, [
      sh('web', 'trap "echo bye; exit 0" TERM; echo "alloc=$NOMAD_ALLOC_ID task=$NOMAD_TASK_NAME dir=$NOMAD_TASK_DIR"; while true; do sleep 0.05; done', {
        killSignal: 'SIGTERM',
      }),
    ]);
    const out = await stdoutUntil(r, 'web', (t) => t.includes('dir='));
    expect(out).to.include(`alloc=${r.allocId} task=web dir=${r.allocDir.dir}/web/local`);
    const pid = pidOf(r, 'web')!;
    expect(alive(pid)).to.equal(true);
    client.updateAlloc({ ...r.alloc(), desiredStatus: 'stop', allocModifyIndex: 2 });
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    expect(alive(pid)).to.equal(false);
    const ev = r.alloc().taskStates!.web!.events.map((e) => e.type);
    expect(ev).to.include.members(['Killing', 'Terminated', 'Killed']);
    expect(await stdoutUntil(r, 'web', (t) => t.includes('bye'))).to.include('bye');
  });

  it('a crashing task is restarted per its policy with real delays, then fails the alloc', async () => {
    const client = newClient();
    const r = client.addAlloc(
      makeAlloc([sh('crash', 'echo started; exit 7')], { group: { restartPolicy: { attempts: 2, intervalMs: 60_000, delayMs: 20, mode: 'fail' } } }),
    );
    await viewWhere(client, r, (a) => a.clientStatus === 'failed');
    const ts = r.alloc().taskStates!.crash!;
    expect(ts.restarts).to.equal(2);
    expect(ts.events.filter((e) => e.type === 'Terminated').every((e) => e.details.exit_code === '7')).to.equal(true);
    expect(ts.events[ts.events.length - 1]!.type).to.equal('Not Restarting');
  });

  it('a missing binary is a "Driver Failure" with the OS reason', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([{ name: 'web', driver: 'raw_exec', config: { command: '/no/such/binary' } }]));
    await viewWhere(client, r, (a) => a.clientStatus === 'failed');
    const ev = r.alloc().taskStates!.web!.events.find((e) => e.type === 'Driver Failure')!;
    expect(ev.displayMessage).to.match(/no such file or directory/i);
  });

  it('signal, restartTask and restartAll, with Nomad events and errors', async () => {
    const client = newClient();
    const events = record(client, 'task.event');
    const r = await run(client, [sh('web', 'trap "echo got-usr1" USR1; echo up; while true; do sleep 0.05; done')]);
    await stdoutUntil(r, 'web', (t) => t.includes('up'));
    await r.signal('web', 'SIGUSR1');
    await stdoutUntil(r, 'web', (t) => t.includes('got-usr1'));
    expect(events.items.some((m) => m.event.type === 'Signaling' && m.event.displayMessage === 'Task being sent signal SIGUSR1')).to.equal(true);

    const pid1 = pidOf(r, 'web')!;
    await r.restartTask('web', 'operator asked');
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running' && a.taskStates!.web!.restarts === 1);
    const pid2 = pidOf(r, 'web')!;
    expect(pid2).to.not.equal(pid1);
    expect(alive(pid1)).to.equal(false);
    const rs = r.alloc().taskStates!.web!.events.find((e) => e.type === 'Restart Signaled')!;
    expect(rs.displayMessage).to.equal('operator asked');

    await r.restartAll();
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running' && a.taskStates!.web!.restarts === 2);
    expect(alive(pid2)).to.equal(false);

    let err: unknown;
    await r.restartTask('nope').catch((e) => (err = e));
    expect(err).to.be.instanceOf(TaskNotFoundError);
    await r.signal('web', 'SIGUSR1'); // still fine
  });

  it('restartTask of a task that is not running: "Task not running"', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([sh('web', 'sleep 10'), sh('once', 'exit 0', { lifecycle: { hook: 'poststart' } })]));
    await viewWhere(client, r, (a) => a.taskStates!.once!.state === 'dead');
    let err: unknown;
    await r.restartTask('once').catch((e) => (err = e));
    expect(err).to.be.instanceOf(TaskNotRunningError);
    expect((err as Error).message).to.equal('Task not running');
  });

  it('shutdown leaves running tasks alone; a new client on the same data dir restores and reattaches them', async () => {
    const client = newClient();
    const a = makeAlloc([
      sh('web', 'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 0.05; done'),
      sh('done', 'echo once', { lifecycle: { hook: 'poststart' } }),
    ]);
    const r = client.addAlloc(a);
    await viewWhere(client, r, (x) => x.taskStates!.web!.state === 'running' && x.taskStates!.done!.state === 'dead');
    const pid = pidOf(r, 'web')!;
    await client.shutdown();
    expect(alive(pid)).to.equal(true);
    // It keeps logging with no host attached: a tick newer than any logged at shutdown appears.
    let atShutdown = '';
    for await (const c of readTaskLogs(r.allocDir.logsDir, 'web', 'stdout')) atShutdown += c.toString();
    const last = Math.max(-1, ...[...atShutdown.matchAll(/tick (\d+)/g)].map((m) => Number(m[1])));
    const signal = AbortSignal.timeout(5000);
    let detached = '';
    for await (const c of readTaskLogs(r.allocDir.logsDir, 'web', 'stdout', { follow: true, offset: Buffer.byteLength(atShutdown), signal })) {
      detached += c.toString();
      if (/tick \d+\n/.test(detached)) break;
    }
    expect(Number(/tick (\d+)\n/.exec(detached)?.[1]), 'a tick logged after shutdown').to.equal(last + 1);

    const again = createClient({ dataDir: client.dataDir });
    try {
      const [r2] = await again.restore();
      expect(r2!.allocId).to.equal(a.id);
      await r2!.waitFor('running');
      await viewWhere(again, r2!, () => pidOf(r2!, 'web') !== undefined);
      expect(pidOf(r2!, 'web')).to.equal(pid); // reattached, not restarted
      expect(r2!.alloc().taskStates!.web!.restarts).to.equal(0);
      expect(r2!.alloc().taskStates!.done!.state).to.equal('dead'); // a finished task stays finished
      const text = await stdoutUntil(r2!, 'web', (t) => /tick [5-9]/.test(t));
      expect(text).to.match(/tick [5-9]/);
      again.updateAlloc({ ...r2!.alloc(), desiredStatus: 'stop', allocModifyIndex: 2 });
      await viewWhere(again, r2!, (x) => x.clientStatus === 'complete');
      expect(alive(pid)).to.equal(false);
      await r2!.destroy();
      expect(await again.restore()).to.deep.equal([]); // a destroyed alloc is gone from the store
    } finally {
      await Promise.allSettled(again.runners().map((x) => x.destroy()));
      await again.shutdown();
    }
  });

  it('restore: a task that exited while no client ran reports its exit, and the policy decides', async () => {
    const client = newClient();
    const a = makeAlloc([sh('web', 'read line < /dev/null; sleep 0.3; exit 4')], {
      jobType: 'batch',
      group: { restartPolicy: { attempts: 0, intervalMs: 60_000, delayMs: 0, mode: 'fail' } },
    });
    const r = client.addAlloc(a);
    await viewWhere(client, r, (x) => x.taskStates!.web!.state === 'running');
    const pid = pidOf(r, 'web')!;
    await client.shutdown();
    while (alive(pid)) await new Promise((res) => setTimeout(res, 20));
    const again = createClient({ dataDir: client.dataDir });
    try {
      const [r2] = await again.restore();
      await viewWhere(again, r2!, (x) => x.clientStatus === 'failed');
      const term = r2!.alloc().taskStates!.web!.events.find((e) => e.type === 'Terminated')!;
      expect(term.details.exit_code).to.equal('4');
    } finally {
      await Promise.allSettled(again.runners().map((x) => x.destroy()));
      await again.shutdown();
    }
  });

  it('a restored alloc publishes only the task events new in this life', async () => {
    const client = newClient();
    const a = makeAlloc([sh('web', 'sleep 60')]);
    const r = client.addAlloc(a);
    await viewWhere(client, r, (x) => x.taskStates!.web!.state === 'running');
    const before = r.alloc().taskStates!.web!.events.length;
    await client.shutdown();
    const again = createClient({ dataDir: client.dataDir });
    const events = record(again, 'task.event');
    try {
      const [r2] = await again.restore();
      await r2!.waitFor('running');
      again.updateAlloc({ ...r2!.alloc(), desiredStatus: 'stop', allocModifyIndex: 2 });
      await viewWhere(again, r2!, (x) => x.clientStatus === 'complete');
      const all = r2!.alloc().taskStates!.web!.events.map((e) => e.type);
      expect(all.slice(0, before)).to.include('Started');
      expect(events.items.map((m) => m.event.type)).to.deep.equal(all.slice(before));
      expect(events.items.map((m) => m.event.type)).to.include('Killed');
    } finally {
      await Promise.allSettled(again.runners().map((x) => x.destroy()));
      await again.shutdown();
    }
  });

  it('a restored alloc whose dir is gone reports failed ("allocation directory is inaccessible") and its restored task is killed', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([sh('web', 'sleep 60')]));
    await viewWhere(client, r, (x) => x.taskStates!.web!.state === 'running');
    const pid = pidOf(r, 'web')!;
    await client.shutdown();
    expect(alive(pid)).to.equal(true);
    for (const m of await mountsUnder(r.allocDir.dir)) await unmount(m, { lazy: true });
    rmSync(r.allocDir.dir, { recursive: true, force: true });
    const again = newClient({ dataDir: client.dataDir });
    const updates = record(again, 'alloc.updated');
    const [restored] = await again.restore();
    await restored!.waitFor('destroyed');
    expect(updates.items.map((m) => m.alloc).find((a) => a.clientStatus === 'failed')!.clientDescription).to.match(/^allocation directory is inaccessible: /);
    await until(() => !alive(pid), 10_000, 'the restored task to be killed');
  });
});
