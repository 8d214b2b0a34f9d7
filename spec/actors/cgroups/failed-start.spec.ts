/** A task cgroup that cannot be made leaves nothing behind, not even the alloc's cgroup. Root only. */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { detectCgroups } from '../../../actors/cgroups/detect.ts';
import { createCgroupManager } from '../../../actors/cgroups/manager.ts';
import { CgroupSetupError } from '../../../actors/cgroups/errors.ts';

describe('cgroups: a failed create removes what it made (root)', () => {
  it('a name the kernel refuses (a newline) leaves no alloc cgroup behind', async function () {
    if (process.geteuid?.() !== 0) return this.skip(); // cgroups need root
    const d = detectCgroups();
    if (!d.ok) return this.skip();
    const mgr = createCgroupManager(d.layout);
    const allocId = `hostile-${process.pid}-${Date.now()}`;
    let err: unknown;
    try {
      await mgr.create({ allocId, taskName: 'web\nx', resources: { memoryMB: 64, cpu: 100 }, applyLimits: true });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(CgroupSetupError);
    const left = Object.values(d.layout.parents)
      .map((p) => path.join(p, allocId))
      .filter((p) => fs.existsSync(p));
    expect(left, 'alloc cgroups left').to.deep.equal([]);
  });
});
