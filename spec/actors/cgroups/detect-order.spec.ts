/**
 * Which hierarchy detection picks when several are mounted, and where berth's parent cgroup goes,
 * on fake cgroupfs trees (plain directories laid out as the kernel lays them out).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { detectCgroups } from '../../../actors/cgroups/detect.ts';

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};

describe('cgroups: which hierarchy detection picks, and where the parent goes', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-cgorder-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  /** A unified mount at `<root>/unified` (with `controllers` offered), its parent writable. */
  const v2 = (controllers: string, parentDir = 'berth') => {
    const mount = path.join(root, 'unified');
    write(path.join(mount, 'cgroup.controllers'), controllers);
    write(path.join(mount, parentDir, 'cgroup.procs'), '');
    return mount;
  };
  /** A v1 memory controller mount at `<root>/memory`, its parent writable. */
  const v1 = () => {
    const mount = path.join(root, 'memory');
    write(path.join(mount, 'berth', 'cgroup.procs'), '');
    return { memory: mount };
  };
  const picked = (d: ReturnType<typeof detectCgroups>) => (d.ok ? d.layout.version : `none: ${d.reason}`);

  it('auto: v2 when the unified mount has controllers, else the v1 controllers, else a controller-less v2, else none', () => {
    expect(picked(detectCgroups({ parent: 'berth', mounts: { v2: v2('cpu memory pids'), v1: v1() }, selfCgroup: '0::/\n' }))).to.equal('v2');
    fs.rmSync(root, { recursive: true, force: true });
    expect(picked(detectCgroups({ parent: 'berth', mounts: { v2: v2(''), v1: v1() }, selfCgroup: '0::/\n' }))).to.equal('v1');
    fs.rmSync(root, { recursive: true, force: true });
    const bare = detectCgroups({ parent: 'berth', mounts: { v2: v2('') }, selfCgroup: '0::/\n' });
    expect(picked(bare)).to.equal('v2');
    expect(bare.ok && bare.layout.controllers).to.deep.equal([]);
    expect(detectCgroups({ parent: 'berth', mounts: { v1: {} }, selfCgroup: '0::/\n' })).to.deep.equal({
      ok: false,
      reason: 'no cgroup v1 controllers mounted',
    });
  });

  it("a relative parent is made under berth's own cgroup, an absolute one from the hierarchy's root; the default is $BERTH_CGROUP_PARENT, else berth", () => {
    const mount = v2('memory', 'user.slice/me/berth');
    const rel = detectCgroups({ parent: 'berth', mounts: { v2: mount }, selfCgroup: '0::/user.slice/me\n' });
    expect(rel.ok && rel.layout.parents).to.deep.equal({ unified: path.join(mount, 'user.slice', 'me', 'berth') });
    write(path.join(mount, 'top', 'cgroup.procs'), '');
    const abs = detectCgroups({ parent: '/top', mounts: { v2: mount }, selfCgroup: '0::/user.slice/me\n' });
    expect(abs.ok && abs.layout.parents).to.deep.equal({ unified: path.join(mount, 'top') });
    const saved = process.env.BERTH_CGROUP_PARENT;
    try {
      process.env.BERTH_CGROUP_PARENT = '/top';
      const fromEnv = detectCgroups({ mounts: { v2: mount }, selfCgroup: '0::/user.slice/me\n' });
      expect(fromEnv.ok && fromEnv.layout.parents).to.deep.equal({ unified: path.join(mount, 'top') });
      delete process.env.BERTH_CGROUP_PARENT;
      const byDefault = detectCgroups({ mounts: { v2: mount }, selfCgroup: '0::/user.slice/me\n' });
      expect(byDefault.ok && byDefault.layout.parents).to.deep.equal({ unified: path.join(mount, 'user.slice', 'me', 'berth') });
    } finally {
      if (saved === undefined) delete process.env.BERTH_CGROUP_PARENT;
      else process.env.BERTH_CGROUP_PARENT = saved;
    }
  });
});
