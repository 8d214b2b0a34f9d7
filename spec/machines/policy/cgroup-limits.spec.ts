import { expect } from 'chai';
import { cgroupLimits, enforceableLimits, formatCpuList, parseCpuList, pickCores, sharesToWeight } from '../../../machines/policy/cgroup-limits.ts';

const MB = 1024 * 1024;

describe('policy: cgroup limits from task resources', () => {
  it('memoryMB alone is the hard limit', () => {
    expect(cgroupLimits({ memoryMB: 256 })).to.deep.equal({ memoryMaxBytes: 256 * MB });
  });

  it('with memoryMaxMB, memoryMB is the soft limit and memoryMaxMB the hard one', () => {
    expect(cgroupLimits({ memoryMB: 256, memoryMaxMB: 1024 })).to.deep.equal({ memoryMaxBytes: 1024 * MB, memoryLowBytes: 256 * MB });
    // a max below the reservation is ignored, as Nomad does
    expect(cgroupLimits({ memoryMB: 256, memoryMaxMB: 128 })).to.deep.equal({ memoryMaxBytes: 256 * MB });
  });

  it("memoryMaxMB -1 (Nomad's MemoryNoLimit): memoryMB is the soft limit and there is no hard one (issue #36)", () => {
    expect(cgroupLimits({ memoryMB: 256, memoryMaxMB: -1 })).to.deep.equal({ memoryLowBytes: 256 * MB });
  });

  it('cpu MHz become cpu shares, clamped to the kernel range', () => {
    expect(cgroupLimits({ cpu: 500 }).cpuShares).to.equal(500);
    expect(cgroupLimits({ cpu: 1 }).cpuShares).to.equal(2);
    expect(cgroupLimits({ cpu: 10_000_000 }).cpuShares).to.equal(262_144);
  });

  it('cores and the client pids limit; nothing asked, nothing limited', () => {
    expect(cgroupLimits({ cores: 2 }, 100)).to.deep.equal({ cores: 2, pidsMax: 100 });
    expect(cgroupLimits(undefined)).to.deep.equal({});
    expect(cgroupLimits({ secretsMB: 4 })).to.deep.equal({});
  });

  it('maps shares onto cgroup v2 weights', () => {
    expect(sharesToWeight(2)).to.equal(1);
    expect(sharesToWeight(1024)).to.equal(39);
    expect(sharesToWeight(262_144)).to.equal(10_000);
    expect(sharesToWeight(400) / sharesToWeight(100)).to.be.within(3.5, 4.5);
  });

  it('drops the limits whose controller the hierarchy lacks', () => {
    const all = cgroupLimits({ memoryMB: 64, cpu: 100, cores: 1 }, 50);
    expect(enforceableLimits(all, [])).to.deep.equal({ limits: {}, dropped: ['memory', 'cpu', 'cpuset', 'pids'] });
    expect(enforceableLimits(all, ['memory', 'cpu', 'cpuset', 'pids']).dropped).to.deep.equal([]);
  });

  it('parses and formats kernel cpu lists', () => {
    expect(parseCpuList('0-2,5\n')).to.deep.equal([0, 1, 2, 5]);
    expect(formatCpuList([5, 0, 2, 1])).to.equal('0-2,5');
    expect(formatCpuList([])).to.equal('');
  });

  it('picks the least used cores, and says when the node has too few', () => {
    expect(pickCores([0, 1, 2, 3], { 0: 2, 1: 1 }, 2)).to.deep.equal([2, 3]);
    expect(pickCores([0, 1], { 0: 1, 1: 1 }, 1)).to.deep.equal([0]);
    expect(pickCores([5, 4, 3, 2, 1, 0], {}, 2), 'all unused: the lowest numbers').to.deep.equal([0, 1]);
    expect(pickCores([0, 1], {}, 3)).to.deep.equal({ error: 'task asks for 3 cores but only 2 are available (0-1)' });
  });

  it('boundaries: zero or negative asks limit nothing; memoryMaxMB not above memoryMB is ignored', () => {
    expect(cgroupLimits({ memoryMB: 0, memoryMaxMB: 0, cpu: 0, cores: 0 }, 0)).to.deep.equal({});
    expect(cgroupLimits({ memoryMB: -1, memoryMaxMB: -5, cpu: -3, cores: -1 }, -2)).to.deep.equal({});
    expect(cgroupLimits({ memoryMB: 256, memoryMaxMB: 256 })).to.deep.equal({ memoryMaxBytes: 256 * MB });
    expect(cgroupLimits({ memoryMB: 256, memoryMaxMB: 128 })).to.deep.equal({ memoryMaxBytes: 256 * MB });
    expect(cgroupLimits({ memoryMB: 0, memoryMaxMB: 512 })).to.deep.equal({ memoryMaxBytes: 512 * MB });
    expect(cgroupLimits({ cores: 2.7 }, 99.9)).to.deep.equal({ cores: 2, pidsMax: 99 });
    expect(cgroupLimits(undefined, 1)).to.deep.equal({ pidsMax: 1 });
    expect(cgroupLimits({ memoryMB: -5, memoryMaxMB: -1 })).to.deep.equal({});
    expect(cgroupLimits({ memoryMB: -5, memoryMaxMB: 0 })).to.deep.equal({});
  });

  it('shares to weight: zero and below are 0; 1 share clamps to the minimum', () => {
    expect(sharesToWeight(0)).to.equal(0);
    expect(sharesToWeight(-10)).to.equal(0);
    expect(sharesToWeight(1)).to.equal(1);
  });

  it('cpu lists: spaces, empty parts, junk and single cores', () => {
    expect(parseCpuList(' 0-2,,5 \n')).to.deep.equal([0, 1, 2, 5]);
    expect(parseCpuList('x,3')).to.deep.equal([3]);
    expect(parseCpuList('')).to.deep.equal([]);
    expect(formatCpuList([])).to.equal('');
    expect(formatCpuList([7])).to.equal('7');
    expect(formatCpuList([5, 3, 4, 4, 9, 10, 0])).to.equal('0,3-5,9-10');
    expect(formatCpuList([1, 3, 5])).to.equal('1,3,5');
  });

  it('picking exactly as many cores as there are; ties by number; result sorted', () => {
    expect(pickCores([3, 1, 2], {}, 3)).to.deep.equal([1, 2, 3]);
    expect(pickCores([0, 1, 2, 3], { 0: 2, 1: 1, 2: 1, 3: 0 }, 2)).to.deep.equal([1, 3]); // 3 unused, then 1 before 2 on the tie
    expect(pickCores([0, 1, 2, 3], { 0: 5, 3: 1 }, 2)).to.deep.equal([1, 2]);
    expect(pickCores([10, 2, 7], { 10: 0, 2: 3, 7: 0 }, 2)).to.deep.equal([7, 10]);
    expect(pickCores([5, 4, 3, 2, 1, 0], {}, 2), 'all unused: the lowest numbers').to.deep.equal([0, 1]);
    expect(pickCores([0, 1], {}, 3)).to.deep.equal({ error: 'task asks for 3 cores but only 2 are available (0-1)' });
  });
});
