/**
 * The cgroup v2 code path on a real unified mount. On this kind of machine the v2 mount has no
 * controllers (they are all bound to v1), so what runs for real is process tracking,
 * `cgroup.kill` and CPU usage from `cpu.stat`; the limit files are covered by the fake cgroupfs
 * spec. Root only; skipped without a writable unified mount.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { detectCgroups } from '../../../actors/cgroups/detect.ts';
import { createCgroupManager, type CgroupManager } from '../../../actors/cgroups/manager.ts';
import { killCgroup, oomKillCount, spawnInCgroup } from '../../../actors/cgroups/procs.mjs';
import { createRawExecDriver } from '../../../actors/drivers/raw-exec.ts';
import type { ProcessHandleState } from '../../../actors/drivers/executor/process-driver.ts';
import { ABORT, alive, cleanup, sandbox, sh, startTracked, until } from '../drivers/support/helpers.ts';
import { pidsIn, sessionOf } from './support/cgroup-helpers.ts';
import { cgroupVersionOrSkip } from '../../support/skips.ts';

describe('cgroups v2 on the real unified mount (root)', function () {
  this.timeout(20_000);
  let mgr: CgroupManager;

  before(function () {
    cgroupVersionOrSkip(this, 'v2');
    const d = detectCgroups({ mode: 'v2' });
    if (!d.ok) throw new Error(d.reason);
    mgr = createCgroupManager(d.layout);
  });
  afterEach(() => cleanup());

  it('cgroup.kill ends every member, forks included', async () => {
    const cg = await mgr.create({ allocId: 'v2-direct', taskName: 't', applyLimits: true });
    expect(cg.version).to.equal('v2');
    expect(cg.canKill).to.equal(true);
    const child = spawnInCgroup(cg, () => spawn('/bin/sh', ['-c', 'sleep 1000 & sleep 1000 & wait'], { stdio: 'ignore', detached: true }));
    child.unref();
    await until(() => pidsIn(cg).length === 3, 5000, 'three members');
    const pids = pidsIn(cg);
    expect(pids).to.include(child.pid);
    // this process is back in its own cgroup
    expect(fs.readFileSync('/proc/self/cgroup', 'utf8')).to.not.include('v2-direct');
    expect(await killCgroup(cg)).to.equal(true);
    for (const pid of pids) expect(alive(pid)).to.equal(false);
    expect(oomKillCount(cg)).to.equal(undefined); // no memory controller here: OOM kills cannot be counted
    expect(await mgr.remove(cg)).to.equal(true);
    expect(fs.existsSync(path.dirname(cg.paths.unified!))).to.equal(false);
  });

  it('raw_exec: the task starts inside its cgroup, stats measure CPU, stop kills a setsid grandchild, destroy removes it', async () => {
    const driver = createRawExecDriver({ cgroups: mgr });
    const sb = sandbox();
    const h = await startTracked(
      driver,
      sb.config(
        sh("(setsid sh -c 'exec sleep 1000' &); i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; exec sleep 1000", { resources: { memoryMB: 64, cpu: 200 } }),
      ),
    );
    const st = h.state as ProcessHandleState;
    const cg = st.cgroup!;
    expect(cg.version).to.equal('v2');
    expect(cg.unenforced).to.deep.equal(['memory', 'cpu']); // a controller-less mount limits nothing
    expect(fs.readFileSync(`/proc/${h.pid}/cgroup`, 'utf8')).to.include(`0::${cg.paths.unified!.slice(cg.mounts.unified!.length)}`);
    await until(() => new Set(pidsIn(cg).map(sessionOf)).size > 1, 5000, 'the setsid grandchild');
    await until(async () => (await driver.stats!(h)).resourceUsage.cpuStats.percent > 0, 5000, 'CPU use');
    const u = (await driver.stats!(h)).resourceUsage;
    expect(u.cpuStats.measured).to.include.members(['User Mode', 'System Mode', 'Percent']);
    expect(u.memoryStats.measured).to.deep.equal([]);
    const pids = pidsIn(cg);
    const waiting = driver.wait(h, ABORT());
    await driver.stop(h, 1000, 'SIGINT');
    await waiting;
    for (const pid of pids) expect(alive(pid), `pid ${pid}`).to.equal(false);
    await driver.destroy(h, true);
    expect(fs.existsSync(cg.paths.unified!)).to.equal(false);
  });
});
