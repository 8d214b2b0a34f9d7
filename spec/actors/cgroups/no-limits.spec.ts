/**
 * A task gets a cgroup (for clean kills and stats) even when no limit applies: raw_exec made with
 * `resourceLimits: false`, or a task without `resources`. Root only.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { detectCgroups } from '../../../actors/cgroups/detect.ts';
import { createCgroupManager, type CgroupManager } from '../../../actors/cgroups/manager.ts';
import type { TaskCgroup } from '../../../actors/cgroups/types.ts';
import { createExecDriver } from '../../../actors/drivers/exec.ts';
import { createRawExecDriver } from '../../../actors/drivers/raw-exec.ts';
import type { ProcessHandleState } from '../../../actors/drivers/executor/process-driver.ts';
import type { TaskHandle } from '../../../actors/drivers/driver.ts';
import { buildMiniChroot, cleanup, sandbox, sh, startTracked } from '../drivers/support/helpers.ts';
import { pidsIn } from './support/cgroup-helpers.ts';
import { skipOrFailInCi } from '../../support/skips.ts';

/** The memory limit the task's cgroup holds, in bytes, or undefined for none. */
function memoryLimit(cg: TaskCgroup): number | undefined {
  const file = cg.version === 'v1' ? path.join(cg.paths.memory!, 'memory.limit_in_bytes') : path.join(cg.paths.unified!, 'memory.max');
  const text = fs.readFileSync(file, 'utf8').trim();
  return text === 'max' || Number(text) > 2 ** 60 ? undefined : Number(text);
}

describe('cgroups: a cgroup without limits (root)', function () {
  this.timeout(20_000);
  let mgr: CgroupManager;
  before(function () {
    if (process.geteuid?.() !== 0) skipOrFailInCi(this, 'cgroups need root');
    const d = detectCgroups();
    if (!d.ok) skipOrFailInCi(this, `no writable cgroup hierarchy: ${d.reason}`);
    if (d.ok && !d.layout.controllers.includes('memory')) this.skip();
    mgr = createCgroupManager(d.layout);
  });
  afterEach(() => cleanup());

  const cgroupOf = (h: TaskHandle) => (h.state as ProcessHandleState).cgroup!;

  it('raw_exec made with resourceLimits false puts the task in a cgroup and writes no limit; by default it writes the task memory', async () => {
    const resources = { resources: { memoryMB: 64 } };
    const free = await startTracked(createRawExecDriver({ cgroups: mgr, resourceLimits: false }), sandbox('free').config(sh('exec sleep 60', resources)));
    const limited = await startTracked(createRawExecDriver({ cgroups: mgr }), sandbox('limited').config(sh('exec sleep 60', resources)));
    expect(pidsIn(cgroupOf(free))).to.include(free.pid);
    expect(memoryLimit(cgroupOf(free))).to.equal(undefined);
    expect(memoryLimit(cgroupOf(limited))).to.equal(64 * 1024 * 1024);
  });

  it('a task without resources gets a cgroup and no limits', async () => {
    const h = await startTracked(createRawExecDriver({ cgroups: mgr }), sandbox('bare').config(sh('exec sleep 60')));
    expect(pidsIn(cgroupOf(h))).to.include(h.pid);
    expect(memoryLimit(cgroupOf(h))).to.equal(undefined);
  });

  it('exec always writes the limits of the task resources', async () => {
    const base = sandbox('jailed').config({ driver: 'exec', ...sh('exec sleep 60', { resources: { memoryMB: 64 } }) });
    buildMiniChroot(base.taskDir.dir, ['/bin/sh', '/bin/sleep']);
    const h = await startTracked(createExecDriver({ cgroups: mgr }), { ...base, env: { ...base.env, PATH: '/usr/bin:/bin' } });
    expect(pidsIn(cgroupOf(h))).to.include(h.pid);
    expect(memoryLimit(cgroupOf(h))).to.equal(64 * 1024 * 1024);
  });
});
