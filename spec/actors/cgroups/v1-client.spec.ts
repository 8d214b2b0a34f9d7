/**
 * Task cgroups through the client on this machine's cgroup v1 hierarchy: limits, OOM reports,
 * CPU shares, escape-proof kills and stats. Root only; skipped elsewhere, and where the
 * machine has no writable v1 hierarchy.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AllocRunner, Client } from '../../../actors/client/types.ts';
import type { Allocation, Task } from '../../../model/types.ts';
import { makeAlloc } from '../../support/fixtures.ts';
import { record, useTempClients, viewWhere } from '../../support/temp-client.ts';
import { allocDirsOf, anyDirLeft, cgroupOf, handleOf, cpuNs, pidsIn, sessionOf } from './support/cgroup-helpers.ts';
import { alive, buildMiniChroot, until } from '../drivers/support/helpers.ts';
import { cgroupVersionOrSkip } from '../../support/skips.ts';

const noRestart = { attempts: 0, intervalMs: 60_000, delayMs: 0, mode: 'fail' as const };
const task = (name: string, command: string, args: string[], extra: Partial<Task> = {}): Task => ({
  name,
  driver: 'raw_exec',
  config: { command, args },
  killTimeoutMs: 1000,
  restartPolicy: noRestart,
  ...extra,
});
const sh = (name: string, script: string, extra: Partial<Task> = {}) => task(name, '/bin/sh', ['-c', script], extra);
const done = (client: Client, r: AllocRunner) => viewWhere(client, r, (a) => a.clientStatus === 'complete' || a.clientStatus === 'failed');
/** Stops the alloc and waits until every task is dead. */
async function stop(client: Client, r: AllocRunner) {
  client.updateAlloc({ ...r.alloc(), desiredStatus: 'stop', allocModifyIndex: r.alloc().allocModifyIndex + 1 });
  await viewWhere(client, r, (a) => Object.values(a.taskStates ?? {}).every((t) => t.state === 'dead'));
}
const events = (r: AllocRunner, t: string) => r.alloc().taskStates![t]!.events;

describe('cgroups v1 through the client (root)', function () {
  this.timeout(30_000);
  const newClient = useTempClients();

  before(function () {
    cgroupVersionOrSkip(this, 'v1');
  });

  it('says which hierarchy it uses, on the bus and in a Driver event', async () => {
    const client = newClient();
    const detected = new Promise((resolve) => client.bus.of('cgroups.detected').subscribe(resolve));
    const r = client.addAlloc(makeAlloc([sh('web', 'exit 0', { resources: { memoryMB: 64, cpu: 250 } })], { jobType: 'batch' }));
    expect(await detected).to.deep.include({ version: 'v1' });
    await done(client, r);
    const ev = events(r, 'web').find((e) => e.type === 'Driver' && e.message?.startsWith('resources:'));
    expect(ev?.displayMessage).to.equal('resources: cgroup v1: memory 64 MB hard, cpu shares 250');
  });

  it('OOM-kills a task past memoryMB and reports it; the restart policy decides; a task under the limit runs', async () => {
    const client = newClient();
    const policy = { attempts: 1, intervalMs: 60_000, delayMs: 0, mode: 'fail' as const };
    const hog = client.addAlloc(
      makeAlloc([task('hog', '/usr/bin/tail', ['/dev/zero'], { resources: { memoryMB: 32 }, restartPolicy: policy })], { jobType: 'batch' }),
    );
    const fits = client.addAlloc(
      makeAlloc([sh('fits', 'x=$(head -c 8000000 /dev/zero | tr "\\0" a); echo ${#x}', { resources: { memoryMB: 64 } })], { jobType: 'batch' }),
    );
    await Promise.all([done(client, hog), done(client, fits)]);
    const evs = events(hog, 'hog');
    const terminated = evs.filter((e) => e.type === 'Terminated');
    expect(terminated).to.have.length(2); // the first run and its one restart
    for (const t of terminated) {
      expect(t.details).to.deep.include({ exit_code: '137', signal: '9', oom_killed: 'true', exit_message: 'OOM Killed' });
      expect(t.displayMessage).to.equal('Exit Code: 137, Signal: 9, Exit Message: "OOM Killed"');
    }
    expect(evs.map((e) => e.type)).to.include.members(['Restarting', 'Not Restarting']);
    expect(hog.alloc().clientStatus).to.equal('failed');

    expect(fits.alloc().clientStatus, JSON.stringify(events(fits, 'fits').map((e) => e.displayMessage))).to.equal('complete');
    const fitsTerm = events(fits, 'fits').find((e) => e.type === 'Terminated')!;
    expect(fitsTerm.details.exit_code).to.equal('0');
    expect(fitsTerm.details.oom_killed).to.equal(undefined);
    let out = '';
    for await (const c of fits.logs('fits', 'stdout')) out += c.toString();
    expect(out.trim()).to.equal('8000000');
  });

  it("caps a task's processes at the client's pidsLimit", async () => {
    const client = newClient({ cgroups: { pidsLimit: 5 } });
    const r = client.addAlloc(makeAlloc([sh('forker', 'i=0; while [ $i -lt 10 ]; do sleep 30 & i=$((i+1)); done; echo all-forked')], { jobType: 'batch' }));
    await done(client, r);
    const evs = events(r, 'forker');
    expect(evs.find((e) => e.type === 'Driver' && e.message?.startsWith('resources:'))?.displayMessage).to.equal('resources: cgroup v1: pids 5');
    expect(evs.find((e) => e.type === 'Terminated')?.details.exit_code).to.equal('2'); // sh: Cannot fork
    let err = '';
    for await (const c of r.logs('forker', 'stderr')) err += c.toString();
    expect(err).to.match(/Cannot fork/);
  });

  it('gives two busy tasks on one core CPU in the ratio of their cpu (100 vs 400)', async () => {
    const client = newClient();
    // Both pinned to the same core so they compete; shares only matter under contention.
    const busy = (name: string, cpu: number) => task(name, '/usr/bin/taskset', ['-c', '0', '/bin/sh', '-c', 'while :; do :; done'], { resources: { cpu } });
    const small = client.addAlloc(makeAlloc([busy('small', 100)]));
    const big = client.addAlloc(makeAlloc([busy('big', 400)]));
    await until(() => !!handleOf(small, 'small') && !!handleOf(big, 'big'), 10_000, 'both started');
    const a = cgroupOf(small, 'small');
    const b = cgroupOf(big, 'big');
    const a0 = cpuNs(a);
    const b0 = cpuNs(b);
    // Measure until they used 1 s of CPU between them (about 1 s of wall time on an idle core).
    await until(() => cpuNs(a) - a0 + (cpuNs(b) - b0) >= 1e9, 8000, '1 s of CPU');
    const ratio = (cpuNs(b) - b0) / Math.max(1, cpuNs(a) - a0);
    await Promise.all([stop(client, small), stop(client, big)]);
    expect(ratio, `big/small CPU ratio ${ratio.toFixed(2)}`).to.be.within(2.5, 6.5);
  });

  /** A chroot_env of just what the escaper needs (the default one takes long to build). */
  const miniDirs: string[] = [];
  after(() => {
    for (const d of miniDirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  function miniChroot(): Record<string, string> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-minichroot-'));
    miniDirs.push(root);
    buildMiniChroot(root, ['/bin/sh', '/usr/bin/sleep', '/usr/bin/setsid']);
    return Object.fromEntries(fs.readdirSync(root).map((d) => [path.join(root, d), `/${d}`]));
  }

  /** A task whose main process leaves a setsid'd grandchild behind (double fork). */
  const escaper = "(setsid sh -c 'exec sleep 1000' &); echo started; exec sleep 1000";

  async function escapeProofStop(driver: 'raw_exec' | 'exec') {
    const client = newClient(driver === 'exec' ? { chrootEnv: miniChroot() } : {});
    const r = client.addAlloc(makeAlloc([{ ...sh('web', escaper), driver }]));
    await until(() => !!handleOf(r, 'web'), 40_000, `the task to start (${JSON.stringify(r.alloc().taskStates?.web?.events.map((e) => e.displayMessage))})`);
    const cg = cgroupOf(r, 'web');
    // the grandchild runs in a session of its own: the process-group kill cannot reach it
    await until(() => new Set(pidsIn(cg).map(sessionOf)).size > 1, 5000, 'the setsid grandchild');
    const pids = pidsIn(cg);
    await stop(client, r);
    for (const pid of pids) expect(alive(pid), `pid ${pid} left after stop`).to.equal(false);
    await r.destroy();
    expect(anyDirLeft([...Object.values(cg.paths), ...allocDirsOf(cg)])).to.deep.equal([]);
  }

  it('stop ends a setsid grandchild too (raw_exec), and removes the cgroup', () => escapeProofStop('raw_exec'));

  it('stop ends a setsid grandchild too (exec)', () => escapeProofStop('exec'));

  it('without cgroups the same grandchild escapes the process-group kill (why cgroups matter)', async () => {
    const client = newClient({ cgroups: { mode: 'off' } });
    const r = client.addAlloc(makeAlloc([sh('web', '(setsid sh -c \'echo $$ > "$NOMAD_TASK_DIR/esc.pid"; exec sleep 1000\' &); exec sleep 1000')]));
    await until(() => !!handleOf(r, 'web'), 10_000, 'the task to start');
    const file = path.join(r.allocDir.dir, 'web', 'local', 'esc.pid');
    await until(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim() !== '', 5000, 'esc.pid');
    const pid = Number(fs.readFileSync(file, 'utf8'));
    // stats still come, from the process group in /proc: what Nomad's basic executor measures
    const u = (await r.stats()).tasks.web!.resourceUsage;
    expect(u.memoryStats.measured).to.deep.equal(['RSS', 'Swap']);
    expect(u.memoryStats.rss).to.be.greaterThan(0);
    expect(u.cpuStats.measured).to.deep.equal(['System Mode', 'User Mode', 'Percent']);
    await stop(client, r);
    try {
      expect(alive(pid)).to.equal(true);
      expect(events(r, 'web').some((e) => e.type === 'Driver' && /no cgroup/.test(e.displayMessage))).to.equal(true);
    } finally {
      process.kill(pid, 'SIGKILL');
    }
  });

  it('reports usage that moves when the task allocates and burns CPU, on runner.stats() and the bus', async () => {
    const client = newClient({ statsIntervalMs: 100 });
    const stats = record(client, 'task.stats');
    const r = client.addAlloc(
      makeAlloc([sh('web', 'x=$(head -c 30000000 /dev/zero | tr "\\0" a); while :; do :; done', { resources: { memoryMB: 256, cpu: 100 } })]),
    );
    await r.waitFor('running');
    let last = await r.stats();
    await until(
      async () => {
        last = await r.stats();
        const t = last.tasks.web?.resourceUsage;
        return !!t && t.memoryStats.rss >= 30e6 && t.cpuStats.percent > 20;
      },
      15_000,
      'usage to move',
    );
    const u = last.tasks.web!.resourceUsage;
    expect(u.memoryStats.measured).to.deep.equal(['RSS', 'Cache', 'Swap', 'Usage', 'Max Usage']);
    expect(u.memoryStats.usage).to.be.at.least(u.memoryStats.rss);
    expect(u.memoryStats.maxUsage).to.be.at.least(u.memoryStats.usage);
    expect(u.cpuStats.measured).to.deep.equal(['System Mode', 'User Mode', 'Throttled Periods', 'Throttled Time', 'Percent']);
    expect(u.cpuStats.totalTicks).to.be.greaterThan(0);
    expect(last.resourceUsage.memoryStats.rss).to.equal(u.memoryStats.rss); // one task: the sum is its own
    await until(() => stats.items.some((m) => m.allocId === r.allocId && m.task === 'web' && m.usage.memoryStats.usage > 0), 5000, 'a task.stats message');
    stats.stop();
    await stop(client, r);
  });
});

export type { Allocation };
