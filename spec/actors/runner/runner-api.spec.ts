import { expect } from 'chai';
import type { Task } from '../../../model/types.ts';
import type { AllocRunner, Client } from '../../../actors/client/types.ts';
import { AllocExistsError } from '../../../model/errors.ts';
import { makeAlloc } from '../../support/fixtures.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';

const sh = (name: string, script: string, extra: Partial<Task> = {}): Task => ({
  name,
  driver: 'raw_exec',
  config: { command: '/bin/sh', args: ['-c', script] },
  killTimeoutMs: 2000,
  ...extra,
});

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

const running = (client: Client, r: AllocRunner, names: string[]) => viewWhere(client, r, (a) => names.every((n) => a.taskStates?.[n]?.state === 'running'));

describe('runner API: stop, done, restartRunning, typed exits (real raw_exec)', function () {
  this.timeout(20_000);
  const newClient = useTempClients();

  it("done() resolves with each task's exit code, signal and restarts once the alloc is over; TaskState carries them typed", async () => {
    const client = newClient();
    const r = client.addAlloc(
      makeAlloc([sh('ok', 'exit 0'), sh('bad', 'exit 3')], {
        jobType: 'batch',
        group: { restartPolicy: { attempts: 0, intervalMs: 60_000, delayMs: 0, mode: 'fail' } },
      }),
    );
    const result = await r.done();
    expect(result.clientStatus).to.equal('failed');
    expect(result.tasks.bad).to.include({ state: 'dead', failed: true, exitCode: 3, signal: 0, oomKilled: false, restarts: 0 });
    expect(result.tasks.bad!.startedAt).to.be.a('number');
    expect(result.tasks.bad!.finishedAt).to.be.at.least(result.tasks.bad!.startedAt!);
    // The sibling was either done already or killed by the failure; either way it is dead.
    expect(result.tasks.ok!.state).to.equal('dead');
    const st = r.alloc().taskStates!.bad!;
    expect([st.exitCode, st.signal, st.oomKilled]).to.deep.equal([3, 0, false]);
    await r.destroy();
  });

  it('stop() is a stop update at the next index; done() reports the signal that ended the task', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([sh('web', 'echo up; while true; do sleep 0.05; done', { killSignal: 'SIGTERM' })]));
    await running(client, r, ['web']);
    await stdoutUntil(r, 'web', (t) => t.includes('up'));
    const index = r.alloc().allocModifyIndex;
    await r.stop();
    expect(r.alloc().desiredStatus).to.equal('stop');
    expect(r.alloc().allocModifyIndex).to.equal(index + 1);
    const result = await r.done();
    expect(result.clientStatus).to.equal('complete');
    expect(result.tasks.web).to.include({ state: 'dead', failed: false, signal: 15 });
    await r.destroy();
  });

  it('stop({ noShutdownDelay }) skips a shutdown_delay that would otherwise hold the kill', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([sh('web', 'while true; do sleep 0.05; done', { shutdownDelayMs: 600_000 })]));
    await running(client, r, ['web']);
    await r.stop({ noShutdownDelay: true });
    expect(r.alloc().desiredTransition?.noShutdownDelay).to.equal(true);
    const result = await r.done();
    expect(result.clientStatus).to.equal('complete');
    expect(r.alloc().taskStates!.web!.events.map((e) => e.type)).to.include('Skipping shutdown delay');
    await r.destroy();
  });

  it('restartRunning() restarts the running task and leaves a poststop task waiting; restartAll() no longer fails over it', async () => {
    const client = newClient();
    const r = client.addAlloc(
      makeAlloc([sh('web', 'echo "run $$"; while true; do sleep 0.05; done'), sh('post', 'exit 0', { lifecycle: { hook: 'poststop' } })]),
    );
    await running(client, r, ['web']);
    await r.restartRunning('asked');
    await viewWhere(client, r, (a) => a.taskStates!.web!.restarts === 1 && a.taskStates!.web!.state === 'running');
    expect(r.alloc().taskStates!.post!.state).to.equal('pending');
    const restarting = r.alloc().taskStates!.web!.events.find((e) => e.type === 'Restart Signaled');
    expect(restarting?.details.restart_reason).to.equal('asked');
    await r.restartAll();
    await viewWhere(client, r, (a) => a.taskStates!.web!.restarts === 2 && a.taskStates!.web!.state === 'running');
    expect(r.alloc().taskStates!.post!.state).to.equal('pending');
    await r.destroy();
  });

  it('restartAll() runs a prestart task that already ended again, before the main task; restartRunning() leaves it dead', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([sh('init', 'echo init', { lifecycle: { hook: 'prestart' } }), sh('web', 'while true; do sleep 0.05; done')]));
    await running(client, r, ['web']);
    const starts = (a: ReturnType<typeof r.alloc>, t: string) => a.taskStates![t]!.events.filter((e) => e.type === 'Started').length;
    expect([r.alloc().taskStates!.init!.state, starts(r.alloc(), 'init')]).to.deep.equal(['dead', 1]);
    await r.restartRunning();
    await viewWhere(client, r, (a) => a.taskStates!.web!.restarts === 1 && a.taskStates!.web!.state === 'running');
    expect(starts(r.alloc(), 'init')).to.equal(1);
    await r.restartAll();
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running' && a.taskStates!.web!.restarts === 2);
    const after = r.alloc();
    expect(starts(after, 'init')).to.equal(2);
    // the prestart task ran (and ended) again before the main task started again
    const initEnd = after.taskStates!.init!.events.filter((e) => e.type === 'Terminated').at(-1)!.time;
    const webStart = after.taskStates!.web!.events.filter((e) => e.type === 'Started').at(-1)!.time;
    expect(webStart).to.be.at.least(initEnd);
    await r.destroy();
  });

  it('addAlloc of an id the client already runs is refused (AllocExistsError); the one runner and its task stay as they were', async () => {
    const client = newClient();
    const alloc = makeAlloc([sh('web', 'while true; do sleep 0.05; done')]);
    const r = client.addAlloc(alloc);
    await running(client, r, ['web']);
    const events = r.alloc().taskStates!.web!.events.length;
    expect(() => client.addAlloc(alloc)).to.throw(AllocExistsError, `allocation ${alloc.id} is already running on this client; use updateAlloc`);
    expect(client.runners()).to.deep.equal([r]);
    expect(client.runner(alloc.id)).to.equal(r);
    expect([r.alloc().taskStates!.web!.state, r.alloc().taskStates!.web!.events.length]).to.deep.equal(['running', events]);
    await r.destroy();
  });

  it('done() rejects when the client shuts down first (the tasks are left running)', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([sh('web', 'while true; do sleep 0.05; done')]));
    await running(client, r, ['web']);
    const done = r.done().then(
      () => 'resolved',
      (e: unknown) => String(e),
    );
    await client.shutdown();
    expect(await done).to.match(/stopped before it finished/);
    // The task was left running: a client on the same data dir brings it back, to destroy it.
    const again = newClient({ dataDir: client.dataDir });
    const [back] = await again.restore();
    await back!.destroy();
  });
});
