/**
 * When a task's executor is gone (killed), stop still ends every process of the task through its
 * cgroup, and destroy removes the cgroup. Root only.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import { detectCgroups } from '../../../actors/cgroups/detect.ts';
import { createCgroupManager, type CgroupManager } from '../../../actors/cgroups/manager.ts';
import { createRawExecDriver } from '../../../actors/drivers/raw-exec.ts';
import type { ProcessHandleState } from '../../../actors/drivers/executor/process-driver.ts';
import { alive, cleanup, sandbox, sh, startTracked, until } from '../drivers/support/helpers.ts';
import { pidsIn, sessionOf } from './support/cgroup-helpers.ts';
import { skipOrFailInCi } from '../../support/skips.ts';

describe('cgroups: a task whose executor died (root)', function () {
  this.timeout(20_000);
  let mgr: CgroupManager;
  before(function () {
    if (process.geteuid?.() !== 0) skipOrFailInCi(this, 'cgroups need root');
    const d = detectCgroups();
    if (!d.ok) skipOrFailInCi(this, `no writable cgroup hierarchy: ${d.reason}`);
    mgr = createCgroupManager(d.layout);
  });
  afterEach(() => cleanup());

  it('stop kills the task and its setsid grandchild by cgroup; destroy removes it; cores are pinned', async () => {
    const driver = createRawExecDriver({ cgroups: mgr });
    const sb = sandbox();
    const h = await startTracked(driver, sb.config(sh("(setsid sh -c 'exec sleep 1000' &); exec sleep 1000", { resources: { cores: 1 } })));
    const st = h.state as ProcessHandleState;
    const cg = st.cgroup!;
    if (cg.version === 'v1') {
      expect(cg.cpuset).to.have.length(1);
      const allowed = /Cpus_allowed_list:\s*(\S+)/.exec(fs.readFileSync(`/proc/${h.pid}/status`, 'utf8'))?.[1];
      expect(allowed).to.equal(String(cg.cpuset![0]));
      // Nomad's NOMAD_CPU_CORES names the pinned cores.
      const environ = fs.readFileSync(`/proc/${h.pid}/environ`, 'utf8').split('\0');
      expect(environ).to.include(`NOMAD_CPU_CORES=${cg.cpuset![0]}`);
    }
    await until(() => new Set(pidsIn(cg).map(sessionOf)).size > 1, 5000, 'the setsid grandchild');
    const pids = pidsIn(cg);
    process.kill(st.executorPid, 'SIGKILL');
    await until(() => !alive(st.executorPid), 5000, 'the executor to die');
    await driver.stop(h, 500, 'SIGINT');
    for (const pid of pids) expect(alive(pid), `pid ${pid}`).to.equal(false);
    await driver.destroy(h, true);
    expect(Object.values(cg.paths).filter((p) => fs.existsSync(p))).to.deep.equal([]);
  });
});
