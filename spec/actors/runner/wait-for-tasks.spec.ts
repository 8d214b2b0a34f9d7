/**
 * `runner.waitForTasks`: the tasks' state, not the chart's. `waitFor('running')` resolves when the
 * alloc enters `running` (prerun hooks done), before any task has started; `waitForTasks('running')`
 * resolves only once every main and sidecar task has started, and rejects when the alloc ends
 * without that.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Task } from '../../../model/types.ts';
import { makeAlloc } from '../../support/fixtures.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';

const sh = (name: string, script: string, extra: Partial<Task> = {}): Task => ({
  name,
  driver: 'raw_exec',
  config: { command: '/bin/sh', args: ['-c', script] },
  killTimeoutMs: 2000,
  ...extra,
});

describe('runner API: waitForTasks (real raw_exec)', function () {
  this.timeout(20_000);
  const newClient = useTempClients();

  it("'running' waits for every main and sidecar task, past a prestart task that runs first", async () => {
    const client = newClient();
    // The prestart task holds the main ones back until it exits: the alloc is `running` meanwhile.
    // It exits once the test creates `go` (a signal could come before its shell set a trap).
    const go = join(mkdtempSync(join(tmpdir(), 'berth-wait-for-tasks-')), 'go');
    const r = client.addAlloc(
      makeAlloc([
        sh('init', `while [ ! -e '${go}' ]; do sleep 0.02; done`, { lifecycle: { hook: 'prestart' } }),
        sh('side', 'while true; do sleep 0.05; done', { lifecycle: { hook: 'prestart', sidecar: true } }),
        sh('web', 'while true; do sleep 0.05; done'),
      ]),
    );
    let resolved = false;
    const waiting = r.waitForTasks('running').then(() => (resolved = true));
    await r.waitFor('running');
    // The chart is running but `web` cannot have started: `init` runs until `go` exists.
    await viewWhere(client, r, (a) => a.taskStates?.init?.state === 'running');
    expect(r.alloc().taskStates?.web?.state ?? 'pending').to.equal('pending');
    expect(resolved, 'resolved before the main task started').to.equal(false);
    // Let init finish successfully: the main task starts, and only then does the wait resolve.
    writeFileSync(go, '');
    await waiting;
    rmSync(dirname(go), { recursive: true, force: true });
    expect(r.alloc().taskStates!.init).to.include({ state: 'dead', failed: false });
    const states = r.alloc().taskStates!;
    expect(states.web!.startedAt, 'web started').to.be.a('number');
    expect(states.side!.startedAt, 'the sidecar started').to.be.a('number');
    // Already there: at once.
    await r.waitForTasks('running');
    await r.destroy();
  });

  it("'running' resolves at once for a batch task that already ran and exited; 'dead' once all are dead", async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([sh('once', 'exit 0')], { jobType: 'batch' }));
    await r.done();
    await r.waitForTasks('running');
    await r.waitForTasks('dead');
    await r.destroy();
  });

  it("'running' rejects when the alloc ends with a main task that never started", async () => {
    const client = newClient();
    const r = client.addAlloc(
      makeAlloc([sh('init', 'exit 7', { lifecycle: { hook: 'prestart' } }), sh('web', 'sleep 60')], {
        jobType: 'batch',
        group: { restartPolicy: { attempts: 0, intervalMs: 60_000, delayMs: 0, mode: 'fail' } },
      }),
    );
    const err = await r.waitForTasks('running').then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).to.match(/ended before its tasks were running/);
    expect(r.alloc().taskStates?.web?.startedAt).to.equal(undefined);
    await r.destroy();
  });

  it('an aborted signal rejects with its reason and leaves no waiter behind', async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([sh('init', 'read line', { lifecycle: { hook: 'prestart' } }), sh('web', 'sleep 60')]));
    const ctl = new AbortController();
    const waiting = r.waitForTasks('running', ctl.signal);
    ctl.abort(new Error('gave up'));
    const err = await waiting.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).to.equal('gave up');
    await r.destroy();
  });
});
