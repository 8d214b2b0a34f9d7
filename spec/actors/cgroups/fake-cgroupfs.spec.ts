/**
 * Detection, limit files and stats reading against fake cgroupfs trees (plain temp dirs), so the
 * v2 limit files are covered on a machine whose own v2 mount has no controllers.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { detectCgroups } from '../../../actors/cgroups/detect.ts';
import { createCgroupManager } from '../../../actors/cgroups/manager.ts';
import { CgroupStatsReader } from '../../../actors/cgroups/stats.ts';
import { describeTaskCgroup } from '../../../actors/cgroups/describe.ts';
import { CgroupUnavailableError } from '../../../actors/cgroups/errors.ts';
import { sharesToWeight } from '../../../machines/policy/cgroup-limits.ts';

const MB = 1024 * 1024;
const read = (...p: string[]) => fs.readFileSync(path.join(...p), 'utf8').trim();
const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};

describe('cgroups on a fake cgroupfs tree', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-fakecg-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  /** A unified mount whose berth parent has `controllers` enabled for its children. */
  function fakeV2(controllers: string) {
    write(path.join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids');
    write(path.join(root, 'cgroup.subtree_control'), '');
    write(path.join(root, 'berth', 'cgroup.procs'), '');
    write(path.join(root, 'berth', 'cgroup.kill'), '');
    write(path.join(root, 'berth', 'cgroup.subtree_control'), controllers);
    write(path.join(root, 'berth', 'cpuset.cpus.effective'), '0-3');
    return detectCgroups({ mode: 'v2', parent: 'berth', mounts: { v2: root }, selfCgroup: '0::/\n' });
  }

  it('v2: detects the parent and its controllers, and writes memory.max/low, cpu.weight, cpuset.cpus, pids.max', async () => {
    const d = fakeV2('cpuset cpu memory pids');
    if (!d.ok) throw new Error(d.reason);
    expect(d.layout).to.deep.include({ version: 'v2', controllers: ['cpuset', 'cpu', 'memory', 'pids'], canKill: true, cpus: [0, 1, 2, 3] });
    expect(d.layout.parents).to.deep.equal({ unified: path.join(root, 'berth') });
    const mgr = createCgroupManager(d.layout, { pidsLimit: 64, now: () => 1000 });
    const cg = await mgr.create({ allocId: 'a1', taskName: 'web', resources: { memoryMB: 256, memoryMaxMB: 512, cpu: 400, cores: 2 }, applyLimits: true });
    const dir = path.join(root, 'berth', 'a1', 'web');
    expect(cg.paths).to.deep.equal({ unified: dir });
    expect(read(dir, 'memory.max')).to.equal(String(512 * MB));
    expect(read(dir, 'memory.low')).to.equal(String(256 * MB));
    expect(read(dir, 'memory.swap.max')).to.equal('0');
    expect(read(dir, 'cpu.weight')).to.equal(String(sharesToWeight(400)));
    expect(read(dir, 'cpuset.cpus')).to.equal('0-1');
    expect(read(dir, 'pids.max')).to.equal('64');
    // the alloc's cgroup hands controllers down and weighs as much as its tasks
    expect(fs.existsSync(path.join(root, 'berth', 'a1', 'cgroup.subtree_control'))).to.equal(true);
    expect(read(root, 'berth', 'a1', 'cpu.weight')).to.equal(String(sharesToWeight(400)));
    expect(describeTaskCgroup(cg)).to.equal('cgroup v2: memory 256 MB soft / 512 MB hard, cpu weight from 400 shares, cores 0-1, pids 64');

    // the next task pinned to 2 cores gets the other two
    const db = await mgr.create({ allocId: 'a1', taskName: 'db', resources: { cpu: 100, cores: 2 }, applyLimits: true });
    expect(db.cpuset).to.deep.equal([2, 3]);
    expect(read(root, 'berth', 'a1', 'cpu.weight')).to.equal(String(sharesToWeight(400) + sharesToWeight(100)));
  });

  it('v2, memory_max = -1 (no hard limit): memory.low is the reservation, memory.max stays unlimited (issue #36)', async () => {
    const d = fakeV2('memory');
    if (!d.ok) throw new Error(d.reason);
    const mgr = createCgroupManager(d.layout, { now: () => 1000 });
    const cg = await mgr.create({ allocId: 'a1', taskName: 'web', resources: { memoryMB: 100, memoryMaxMB: -1 }, applyLimits: true });
    const dir = path.join(root, 'berth', 'a1', 'web');
    expect(read(dir, 'memory.low')).to.equal(String(100 * MB));
    // Nothing written: a new cgroup's memory.max is "max".
    expect(fs.existsSync(path.join(dir, 'memory.max'))).to.equal(false);
    expect(describeTaskCgroup(cg)).to.equal('cgroup v2: memory 100 MB soft / no hard limit');
  });

  it("v2: the alloc's cgroup is set up by its first task only, not again by each sibling (issue #40)", async () => {
    const d = fakeV2('cpuset cpu memory pids');
    if (!d.ok) throw new Error(d.reason);
    const mgr = createCgroupManager(d.layout);
    await mgr.create({ allocId: 'a1', taskName: 'web', resources: { memoryMB: 64, cpu: 100 }, applyLimits: true });
    const control = path.join(root, 'berth', 'a1', 'cgroup.subtree_control');
    expect(read(control)).to.not.equal('');
    // a plain file stands in for the kernel's: a second write would replace this mark
    fs.writeFileSync(control, 'set-once');
    await mgr.create({ allocId: 'a1', taskName: 'side', resources: { memoryMB: 64, cpu: 100 }, applyLimits: true });
    expect(read(control)).to.equal('set-once');
    await mgr.create({ allocId: 'a2', taskName: 'web', resources: { memoryMB: 64, cpu: 100 }, applyLimits: true });
    expect(read(root, 'berth', 'a2', 'cgroup.subtree_control')).to.not.equal('');
  });

  it('v2 without controllers: tasks are tracked, limits are reported as not enforced', async () => {
    const d = fakeV2('');
    if (!d.ok) throw new Error(d.reason);
    expect(d.layout.controllers).to.deep.equal([]);
    const cg = await createCgroupManager(d.layout).create({ allocId: 'a1', taskName: 'web', resources: { memoryMB: 64, cpu: 100 }, applyLimits: true });
    expect(cg.limits).to.deep.equal({});
    expect(cg.unenforced).to.deep.equal(['memory', 'cpu']);
    expect(fs.existsSync(path.join(cg.paths.unified!, 'memory.max'))).to.equal(false);
    expect(describeTaskCgroup(cg)).to.match(/not enforced \(no memory, cpu controller\)/);
  });

  it('v1: one dir per controller, limits in each, the alloc weighs the sum of its tasks', async () => {
    const mounts: Record<string, string> = {};
    for (const c of ['memory', 'cpu', 'cpuacct', 'cpuset', 'pids', 'freezer']) {
      mounts[c] = path.join(root, c);
      write(path.join(root, c, 'cgroup.procs'), '');
      write(path.join(root, c, 'own', 'berth', 'cgroup.procs'), '');
    }
    write(path.join(root, 'cpuset', 'own', 'cpuset.cpus'), '0-1');
    write(path.join(root, 'cpuset', 'own', 'cpuset.mems'), '0');
    const self = ['4:memory:/own', '3:cpuset:/own', '2:cpu:/own', '1:cpuacct:/own', '6:freezer:/own', '8:pids:/own'].join('\n');
    const d = detectCgroups({ mode: 'v1', parent: 'berth', mounts: { v1: mounts }, selfCgroup: self });
    if (!d.ok) throw new Error(d.reason);
    expect(d.layout.parents.memory).to.equal(path.join(root, 'memory', 'own', 'berth'));
    expect(read(root, 'cpuset', 'own', 'berth', 'cpuset.cpus')).to.equal('0-1'); // a new cpuset level gets its parent's
    const mgr = createCgroupManager(d.layout);
    const web = await mgr.create({ allocId: 'a1', taskName: 'web', resources: { memoryMB: 128, memoryMaxMB: 256, cpu: 300, cores: 1 }, applyLimits: true });
    expect(read(web.paths.memory!, 'memory.limit_in_bytes')).to.equal(String(256 * MB));
    expect(read(web.paths.memory!, 'memory.soft_limit_in_bytes')).to.equal(String(128 * MB));
    expect(read(web.paths.cpu!, 'cpu.shares')).to.equal('300');
    expect(read(web.paths.cpuset!, 'cpuset.cpus')).to.equal('0');
    expect(read(web.paths.cpuset!, 'cpuset.mems')).to.equal('0');
    await mgr.create({ allocId: 'a1', taskName: 'db', resources: { cpu: 200 }, applyLimits: true });
    expect(read(root, 'cpu', 'own', 'berth', 'a1', 'cpu.shares')).to.equal('500');
    // raw_exec with limits off: a cgroup, no limit files
    const raw = await mgr.create({ allocId: 'a2', taskName: 'raw', resources: { memoryMB: 64, cpu: 100 }, applyLimits: false });
    expect(raw.limits).to.deep.equal({});
    expect(fs.existsSync(path.join(raw.paths.memory!, 'memory.limit_in_bytes'))).to.equal(false);
  });

  it("v1: siblings made at once each get the alloc's cpuset, set up once by the first (the writes are on the thread pool)", async () => {
    const mounts: Record<string, string> = {};
    for (const c of ['memory', 'cpuset']) {
      mounts[c] = path.join(root, c);
      write(path.join(root, c, 'own', 'berth', 'cgroup.procs'), '');
    }
    write(path.join(root, 'cpuset', 'own', 'cpuset.cpus'), '0-1');
    write(path.join(root, 'cpuset', 'own', 'cpuset.mems'), '0');
    const d = detectCgroups({ mode: 'v1', parent: 'berth', mounts: { v1: mounts }, selfCgroup: '4:memory:/own\n3:cpuset:/own' });
    if (!d.ok) throw new Error(d.reason);
    const mgr = createCgroupManager(d.layout);
    const names = Array.from({ length: 8 }, (_, i) => `t${i}`);
    const made = await Promise.all(
      ['a1', 'a2'].flatMap((allocId) => names.map((taskName) => mgr.create({ allocId, taskName, resources: { memoryMB: 64, cpu: 100 }, applyLimits: true }))),
    );
    expect(made).to.have.length(16);
    for (const cg of made) {
      expect(read(cg.paths.cpuset!, 'cpuset.cpus'), cg.paths.cpuset).to.equal('0-1');
      expect(read(cg.paths.cpuset!, 'cpuset.mems'), cg.paths.cpuset).to.equal('0');
      expect(read(cg.paths.memory!, 'memory.limit_in_bytes')).to.equal(String(64 * MB));
    }
  });

  it('a forced mode the machine cannot give is a named error; auto falls back with the reason', () => {
    expect(() => detectCgroups({ mode: 'v2', mounts: { v1: {} } })).to.throw(CgroupUnavailableError, /no cgroup v2 mount/);
    expect(detectCgroups({ mode: 'auto', mounts: { v1: {} } })).to.deep.equal({ ok: false, reason: 'no cgroup v1 controllers mounted' });
    expect(detectCgroups({ mode: 'off' })).to.deep.include({ ok: false });
  });

  it("reads v2 and v1 usage into Nomad's shape, CPU as percent since the previous sample", () => {
    let now = 1000;
    const reader = new CgroupStatsReader(() => now);
    const v2dir = path.join(root, 'v2task');
    write(path.join(v2dir, 'memory.stat'), 'anon 4096\nfile 8192\nkernel 100\n');
    write(path.join(v2dir, 'memory.current'), '20000');
    write(path.join(v2dir, 'memory.peak'), '30000');
    write(path.join(v2dir, 'memory.swap.current'), '0');
    write(path.join(v2dir, 'cpu.stat'), 'usage_usec 500000\nuser_usec 400000\nsystem_usec 100000\nnr_periods 0\nnr_throttled 3\nthrottled_usec 7\n');
    const cg2 = { version: 'v2' as const, paths: { unified: v2dir }, mounts: {}, controllers: [], canKill: true, limits: {}, createdAt: 0 };
    // 0.5 s of CPU in the 1 s since the cgroup was made: 50 %
    let u = reader.read('t2', cg2).resourceUsage;
    expect(u.memoryStats).to.deep.equal({
      rss: 4096,
      cache: 8192,
      swap: 0,
      usage: 20000,
      maxUsage: 30000,
      measured: ['RSS', 'Cache', 'Swap', 'Usage', 'Max Usage'],
    });
    expect(u.cpuStats.percent).to.be.closeTo(50, 0.001);
    expect(u.cpuStats.userMode).to.be.closeTo(40, 0.001);
    expect(u.cpuStats.systemMode).to.be.closeTo(10, 0.001);
    expect(u.cpuStats.throttledPeriods).to.equal(3);
    expect(u.cpuStats.throttledTime).to.equal(7000);
    expect(u.cpuStats.measured).to.deep.equal(['System Mode', 'User Mode', 'Throttled Periods', 'Throttled Time', 'Percent']);
    // nothing more used in the next second: 0 %
    now = 2000;
    expect(reader.read('t2', cg2).resourceUsage.cpuStats.percent).to.equal(0);

    // a controller-less v2 cgroup measures CPU only
    const bare = path.join(root, 'bare');
    write(path.join(bare, 'cpu.stat'), 'usage_usec 10\nuser_usec 5\nsystem_usec 5\n');
    u = reader.read('bare', { ...cg2, paths: { unified: bare } }).resourceUsage;
    expect(u.memoryStats.measured).to.deep.equal([]);
    expect(u.cpuStats.measured).to.deep.equal(['System Mode', 'User Mode', 'Percent']);

    const v1 = (c: string) => path.join(root, 'v1', c);
    write(path.join(v1('memory'), 'memory.stat'), 'cache 100\nrss 200\nswap 0\nmapped_file 5\n');
    write(path.join(v1('memory'), 'memory.usage_in_bytes'), '300');
    write(path.join(v1('memory'), 'memory.max_usage_in_bytes'), '400');
    write(path.join(v1('cpuacct'), 'cpuacct.usage'), String(2e9));
    write(path.join(v1('cpuacct'), 'cpuacct.stat'), 'user 150\nsystem 50\n');
    write(path.join(v1('cpu'), 'cpu.stat'), 'nr_periods 0\nnr_throttled 0\nthrottled_time 0\n');
    now = 2000;
    const cg1 = {
      version: 'v1' as const,
      paths: { memory: v1('memory'), cpuacct: v1('cpuacct'), cpu: v1('cpu') },
      mounts: {},
      controllers: [],
      canKill: false,
      limits: {},
      createdAt: 0,
    };
    u = reader.read('t1', cg1).resourceUsage;
    expect(u.memoryStats).to.deep.equal({ rss: 200, cache: 100, swap: 0, usage: 300, maxUsage: 400, measured: ['RSS', 'Cache', 'Swap', 'Usage', 'Max Usage'] });
    expect(u.cpuStats.percent).to.be.closeTo(100, 0.001); // 2 s of CPU in 2 s: one core
    expect(u.cpuStats.userMode).to.be.closeTo(75, 0.001);
    expect(u.cpuStats.totalTicks).to.be.greaterThan(0);
  });
});
