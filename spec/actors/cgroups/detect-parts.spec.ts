/**
 * How berth finds its cgroup hierarchy, on mountinfo text and fake cgroupfs trees (plain temp
 * dirs): which mounts count, where the parent goes, what a layout says about itself, why a
 * hierarchy is refused; and the small cgroupfs file readers, on real files.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { detectCgroups, findCgroupMounts, parentCgroupName } from '../../../actors/cgroups/detect.ts';
import { CgroupUnavailableError } from '../../../actors/cgroups/errors.ts';
import { readKeyed, readNumber, readText, readTextAsync, writeIn, writeInAsync } from '../../../actors/cgroups/fsutil.ts';

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};

describe('cgroup detection, part by part', () => {
  let root: string;
  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-cgdetect-'))));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('findCgroupMounts: v1 controllers from cgroup mounts (first mount wins), the first cgroup2 mount, spaces unescaped, the rest ignored', () => {
    const mountinfo = [
      '22 1 0:21 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory',
      '23 1 0:22 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct,xattr',
      '24 1 0:23 / /other/memory rw - cgroup cgroup rw,memory',
      '25 1 0:24 / /sys/fs/cgroup/net_cls rw - cgroup cgroup rw,net_cls',
      '26 1 0:25 / /sys/fs/cgroup/un\\040ified rw - cgroup2 cgroup2 rw',
      '27 1 0:26 / /second/unified rw - cgroup2 cgroup2 rw',
      '28 1 0:27 / /proc rw - proc proc rw',
      'garbage without a separator',
      '29 1 0:28 / - tmpfs tmpfs rw',
      '',
    ].join('\n');
    expect(findCgroupMounts(mountinfo)).to.deep.equal({
      v1: { memory: '/sys/fs/cgroup/memory', cpu: '/sys/fs/cgroup/cpu,cpuacct', cpuacct: '/sys/fs/cgroup/cpu,cpuacct' },
      v2: '/sys/fs/cgroup/un ified',
    });
    expect(findCgroupMounts('30 1 0:29 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids')).to.deep.equal({ v1: { pids: '/sys/fs/cgroup/pids' } });
    expect(findCgroupMounts('')).to.deep.equal({ v1: {} });
    // This machine's own mounts: each one found is a directory.
    const own = findCgroupMounts();
    for (const dir of [...Object.values(own.v1), ...(own.v2 ? [own.v2] : [])]) expect(fs.statSync(dir).isDirectory(), dir).to.equal(true);
  });

  it('v2: the parent goes under berth’s own cgroup, or from the root when absolute; the summary says what it can do', () => {
    write(path.join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids');
    write(path.join(root, 'own', 'cgroup.controllers'), 'cpu memory io');
    write(path.join(root, 'own', 'cgroup.subtree_control'), '');
    write(path.join(root, 'own', 'berth', 'cgroup.procs'), '');
    write(path.join(root, 'own', 'berth', 'cgroup.subtree_control'), 'memory io');
    const d = detectCgroups({ mode: 'v2', parent: 'berth', mounts: { v2: root }, selfCgroup: '0::/own\n' });
    if (!d.ok) throw new Error(d.reason);
    const dir = path.join(root, 'own', 'berth');
    expect(d.layout.parents).to.deep.equal({ unified: dir });
    expect(d.layout.controllers).to.deep.equal(['memory']);
    expect(d.layout.canKill).to.equal(false);
    expect(d.summary).to.equal(`cgroup v2 (memory) at ${dir}`);
    // The controllers offered were handed down (fake files: the last write stays).
    expect(fs.readFileSync(path.join(root, 'own', 'cgroup.subtree_control'), 'utf8')).to.equal('+memory');
    expect(parentCgroupName(d.layout)).to.equal('own/berth');
    // No cpuset.cpus.effective: the machine's online cpus.
    expect(d.layout.cpus.length).to.be.above(0);

    write(path.join(root, 'abs', 'cgroup.procs'), '');
    write(path.join(root, 'abs', 'cgroup.kill'), '');
    const a = detectCgroups({ mode: 'v2', parent: '/abs', mounts: { v2: root }, selfCgroup: '0::/own\n' });
    if (!a.ok) throw new Error(a.reason);
    expect(a.layout.parents).to.deep.equal({ unified: path.join(root, 'abs') });
    expect(a.summary).to.equal(`cgroup v2 at ${path.join(root, 'abs')}: process tracking and cgroup.kill only, no controllers to limit with`);
    write(path.join(root, 'bare', 'cgroup.procs'), '');
    const b = detectCgroups({ mode: 'v2', parent: '/bare', mounts: { v2: root }, selfCgroup: '0::/\n' });
    expect(b.ok && b.summary).to.equal(`cgroup v2 at ${path.join(root, 'bare')}: process tracking only, no controllers to limit with`);
  });

  it('v1: a dir per controller under its own cgroup, cpuset seeded from the parent, the summary and the parent name', () => {
    const m = (c: string) => path.join(root, c);
    for (const c of ['memory', 'cpu', 'cpuset', 'freezer']) write(path.join(m(c), 'own', 'berth', 'cgroup.procs'), '');
    write(path.join(m('cpuset'), 'own', 'cpuset.cpus'), '0-1');
    write(path.join(m('cpuset'), 'own', 'cpuset.mems'), '0');
    write(path.join(m('cpuset'), 'own', 'berth', 'cpuset.cpus'), '');
    const self = '4:memory:/own\n3:cpu,cpuacct:/own\n2:cpuset:/own\n1:freezer:/own\n';
    const d = detectCgroups({
      mode: 'v1',
      parent: 'berth',
      mounts: { v1: { memory: m('memory'), cpu: m('cpu'), cpuset: m('cpuset'), freezer: m('freezer') } },
      selfCgroup: self,
    });
    if (!d.ok) throw new Error(d.reason);
    expect(d.layout.controllers).to.deep.equal(['memory', 'cpu', 'cpuset', 'freezer']);
    expect(d.layout.canKill).to.equal(true);
    expect(d.layout.cpus).to.deep.equal([0, 1]);
    expect(d.layout.mounts).to.deep.equal({ memory: m('memory'), cpu: m('cpu'), cpuset: m('cpuset'), freezer: m('freezer') });
    expect(d.summary).to.equal('cgroup v1 (memory, cpu, cpuset, freezer) under <own cgroup>/berth');
    expect(fs.readFileSync(path.join(m('cpuset'), 'own', 'berth', 'cpuset.cpus'), 'utf8')).to.equal('0-1');
    expect(fs.readFileSync(path.join(m('cpuset'), 'own', 'berth', 'cpuset.mems'), 'utf8')).to.equal('0');
    expect(parentCgroupName(d.layout)).to.equal('/own/berth');
    write(path.join(m('memory'), 'top', 'cgroup.procs'), '');
    const abs = detectCgroups({ mode: 'v1', parent: '/top', mounts: { v1: { memory: m('memory') } }, selfCgroup: self });
    expect(abs.ok && abs.summary).to.equal('cgroup v1 (memory) under /top');
  });

  it('v1 refusals: only controllers berth cannot use, or none writable, say why', () => {
    const m = (c: string) => path.join(root, c);
    write(path.join(m('pids'), 'berth', 'cgroup.procs'), '');
    expect(() => detectCgroups({ mode: 'v1', parent: 'berth', mounts: { v1: { pids: m('pids') } }, selfCgroup: '' })).to.throw(
      CgroupUnavailableError,
      'cgroups.mode "v1": cgroup v1 not writable (no memory, cpu or freezer controller)',
    );
    // A memory mount with no cgroup.procs to write: the dir and the error code are named.
    fs.mkdirSync(m('memory'));
    expect(() => detectCgroups({ mode: 'v1', parent: 'berth', mounts: { v1: { memory: m('memory') } }, selfCgroup: '' })).to.throw(
      CgroupUnavailableError,
      `cgroups.mode "v1": cgroup v1 not writable (${path.join(m('memory'), 'berth')}: ENOENT)`,
    );
  });

  it('v2 refusal names the dir and the error; auto tries each and joins the reasons', () => {
    fs.writeFileSync(path.join(root, 'cgroup.controllers'), 'memory');
    const d = detectCgroups({ mode: 'auto', parent: 'berth', mounts: { v2: root, v1: {} }, selfCgroup: '0::/\n' });
    expect(d).to.deep.equal({
      ok: false,
      reason: `cgroup v2 at ${root} not writable (${path.join(root, 'berth')}: ENOENT); no cgroup v1 controllers mounted`,
    });
    expect(detectCgroups({ mode: 'auto', mounts: {}, selfCgroup: '' })).to.deep.equal({ ok: false, reason: 'no cgroup v1 controllers mounted' });
    // A v2 mount without memory is tried after v1, in auto only.
    const plain = path.join(root, 'plain');
    fs.mkdirSync(plain);
    expect(detectCgroups({ mode: 'auto', parent: 'berth', mounts: { v2: plain }, selfCgroup: '0::/\n' })).to.deep.equal({
      ok: false,
      reason: `no cgroup v1 controllers mounted; cgroup v2 at ${plain} not writable (${path.join(plain, 'berth')}: ENOENT)`,
    });
  });

  it('refuses a parent that is empty or climbs out with ..', () => {
    for (const parent of ['', 'a/../b', '..']) {
      expect(() => detectCgroups({ parent, mounts: { v1: {} } }), parent).to.throw(CgroupUnavailableError, `invalid cgroup parent ${JSON.stringify(parent)}`);
    }
    expect(detectCgroups({ parent: 'a..b', mounts: { v1: {} } })).to.deep.equal({ ok: false, reason: 'no cgroup v1 controllers mounted' });
  });

  it('the parent defaults to $BERTH_CGROUP_PARENT, else berth', () => {
    write(path.join(root, 'fromenv', 'cgroup.procs'), '');
    write(path.join(root, 'berth', 'cgroup.procs'), '');
    const saved = process.env.BERTH_CGROUP_PARENT;
    try {
      process.env.BERTH_CGROUP_PARENT = 'fromenv';
      const e = detectCgroups({ mode: 'v2', mounts: { v2: root }, selfCgroup: '0::/\n' });
      expect(e.ok && e.layout.parents.unified).to.equal(path.join(root, 'fromenv'));
      delete process.env.BERTH_CGROUP_PARENT;
      const b = detectCgroups({ mode: 'v2', mounts: { v2: root }, selfCgroup: '0::/\n' });
      expect(b.ok && b.layout.parents.unified).to.equal(path.join(root, 'berth'));
    } finally {
      if (saved === undefined) delete process.env.BERTH_CGROUP_PARENT;
      else process.env.BERTH_CGROUP_PARENT = saved;
    }
  });

  it('file readers: trimmed text, one integer ("max" is none), key value lines; undefined when unreadable', async () => {
    write(path.join(root, 'num'), ' 42\n');
    write(path.join(root, 'max'), 'max\n');
    write(path.join(root, 'neg'), '-1\n');
    write(path.join(root, 'stat'), 'anon 10\nfile x\nlonely\n  \nkernel 7\nwide    3\nodd 12x\nweird x12\n');
    write(path.join(root, 'tail'), '12x\n');
    expect(readText(path.join(root, 'num'))).to.equal('42');
    expect(await readTextAsync(path.join(root, 'num'))).to.equal('42');
    expect(readText(path.join(root, 'absent'))).to.equal(undefined);
    expect(await readTextAsync(path.join(root, 'absent'))).to.equal(undefined);
    expect(readNumber(path.join(root, 'num'))).to.equal(42);
    expect(readNumber(path.join(root, 'max'))).to.equal(undefined);
    expect(readNumber(path.join(root, 'neg'))).to.equal(undefined);
    expect(readNumber(path.join(root, 'absent'))).to.equal(undefined);
    expect(readKeyed(path.join(root, 'stat'))).to.deep.equal({ anon: 10, kernel: 7, wide: 3 });
    expect(readNumber(path.join(root, 'tail'))).to.equal(undefined);
    expect(readKeyed(path.join(root, 'absent'))).to.equal(undefined);
  });

  it('a failed cgroupfs write names the value, the file and the error code, and keeps the code', async () => {
    const dir = path.join(root, 'missing');
    let sync: unknown;
    try {
      writeIn(dir, 'memory.max', 64);
    } catch (e) {
      sync = e;
    }
    expect((sync as Error).message).to.equal(`cannot write "64" to ${path.join(dir, 'memory.max')}: ENOENT`);
    expect((sync as NodeJS.ErrnoException).code).to.equal('ENOENT');
    let async: unknown;
    await writeInAsync(dir, 'pids.max', 'max').catch((e) => (async = e));
    expect((async as Error).message).to.equal(`cannot write "max" to ${path.join(dir, 'pids.max')}: ENOENT`);
    expect((async as NodeJS.ErrnoException).code).to.equal('ENOENT');
    await writeInAsync(root, 'ok', 5);
    writeIn(root, 'ok2', 'x');
    expect([readText(path.join(root, 'ok')), readText(path.join(root, 'ok2'))]).to.deep.equal(['5', 'x']);
  });
});
