/**
 * The pure parts of cgroup usage and its descriptions: raw counters to Nomad's shape (what was
 * measured, CPU since the previous sample), the `Driver` event's cgroup line, the usage line.
 */
import { expect } from 'chai';
import { cgroupEventMessage, describeTaskCgroup } from '../../../actors/cgroups/describe.ts';
import { formatUsageLine } from '../../../actors/cgroups/format-usage.ts';
import { toResourceUsage } from '../../../actors/cgroups/raw-usage.ts';
import type { TaskCgroup } from '../../../actors/cgroups/types.ts';
import { emptyUsage } from '../../../model/usage.ts';

const cg = (over: Partial<TaskCgroup> = {}): TaskCgroup => ({
  version: 'v2',
  paths: { unified: '/sys/fs/cgroup/berth/a/web' },
  mounts: {},
  controllers: [],
  canKill: true,
  limits: {},
  createdAt: 0,
  ...over,
});

describe('cgroup usage and descriptions, pure parts', () => {
  it('nothing read: nothing measured, every figure 0 (no NaN from missing CPU counters)', () => {
    const { usage, sample } = toResourceUsage({}, { at: 0, totalNs: 5, userNs: 3, systemNs: 2 }, 1000, 2000);
    expect(usage).to.deep.equal(emptyUsage());
    // The previous counters carry over.
    expect(sample).to.deep.equal({ at: 1000, totalNs: 5, userNs: 3, systemNs: 2 });
  });

  it('CPU counters each name their figure; the sample keeps what was read, and the next look measures from it', () => {
    const prev = { at: 0, totalNs: 0, userNs: 0, systemNs: 0 };
    const a = toResourceUsage({ cpuUserNs: 4e8 }, prev, 1000, 1000);
    expect(a.usage.cpuStats.measured).to.deep.equal(['User Mode']);
    expect(a.usage.cpuStats.userMode).to.be.closeTo(40, 1e-9);
    expect(a.sample).to.deep.equal({ at: 1000, totalNs: 0, userNs: 4e8, systemNs: 0 });
    const b = toResourceUsage({ cpuSystemNs: 1e8, cpuTotalNs: 3e8 }, a.sample, 2000, 1000);
    expect(b.usage.cpuStats.measured).to.deep.equal(['System Mode', 'Percent']);
    expect(b.usage.cpuStats.percent).to.be.closeTo(30, 1e-9);
    expect(b.usage.cpuStats.totalTicks).to.be.closeTo(300, 1e-9);
    expect(b.sample).to.deep.equal({ at: 2000, totalNs: 3e8, userNs: 4e8, systemNs: 1e8 });
    const c = toResourceUsage({ cpuUserNs: 9e8, cpuSystemNs: 1e8 }, b.sample, 3000, 1000);
    expect(c.usage.cpuStats.userMode).to.be.closeTo(50, 1e-9);
    expect(c.usage.cpuStats.systemMode).to.equal(0);
  });

  it('describes a cgroup without limits, with a hard memory limit only, and v1 shares', () => {
    expect(describeTaskCgroup(cg())).to.equal('cgroup v2: no limits (tracking, clean kills and stats)');
    expect(describeTaskCgroup(cg({ version: 'v1', limits: { memoryMaxBytes: 256 << 20, cpuShares: 500 } }))).to.equal(
      'cgroup v1: memory 256 MB hard, cpu shares 500',
    );
  });

  it("the Driver event's line: the cgroup's description, or why there is none, or nothing", () => {
    expect(cgroupEventMessage({ cgroup: cg({ limits: { pidsMax: 10 } }) })).to.equal('resources: cgroup v2: pids 10');
    expect(cgroupEventMessage({ cgroupNote: 'not root' })).to.equal('resources: no cgroup: not root; no limits, kills by process group only');
    expect(cgroupEventMessage({ cgroup: 'v2', cgroupNote: 7 })).to.equal(undefined);
    expect(cgroupEventMessage({ cgroup: { version: 'v2' } })).to.equal(undefined);
    expect(cgroupEventMessage({})).to.equal(undefined);
  });

  it('the usage line says nothing of throttling when no period was throttled', () => {
    const u = emptyUsage();
    u.cpuStats.measured = ['Throttled Periods', 'Throttled Time'];
    expect(formatUsageLine('web', u)).to.equal('web: cpu -, mem rss -, usage -, max -');
  });
});
