/**
 * Usage of a task without a cgroup: what its process group uses, read from /proc, on real
 * processes (a busy one and an idle one in one group), and the stats reader around it.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readProcessGroupUsage } from '../../../actors/cgroups/proc-usage.ts';
import { CgroupStatsReader, mhzPerCore, unmeasured } from '../../../actors/cgroups/stats.ts';
import { emptyUsage } from '../../../model/usage.ts';
import { until } from '../../support/until.ts';

/** User and system ticks of one process, from its /proc stat line. */
function ticks(pid: number): [number, number] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [Number(f[11]), Number(f[12])];
}

describe('cgroups: usage of a process group from /proc (real processes)', function () {
  this.timeout(20_000);
  let leader: ChildProcess;
  let busy: number;
  before(async () => {
    // A leader of its own group that starts a busy child in the same group, then idles.
    leader = spawn(
      process.execPath,
      [
        '-e',
        "const c = require('child_process').spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }); console.log(c.pid); setInterval(() => {}, 1e6);",
      ],
      { detached: true, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    busy = await new Promise<number>((resolve) => leader.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
    // At least 0.2 s of user time in the busy child.
    await until(() => ticks(busy)[0] >= 20, 15_000, 'the busy child to use CPU');
  });
  after(() => {
    try {
      process.kill(-leader.pid!, 'SIGKILL');
    } catch {}
  });

  it("sums the group's memory and CPU: both processes' RSS, their ticks as ns (USER_HZ 100)", () => {
    const [busyUser] = ticks(busy);
    const u = readProcessGroupUsage(leader.pid!);
    // Two node processes: well over one's 10 MB of RSS, well under a GB.
    expect(u.rss).to.be.above(20 << 20);
    expect(u.rss).to.be.below(1 << 30);
    expect(u.rss! % 4096).to.equal(0);
    expect(u.swap).to.be.at.least(0);
    expect(u.cpuUserNs).to.be.at.least(busyUser * 1e7);
    expect(u.cpuTotalNs).to.equal(u.cpuUserNs! + u.cpuSystemNs!);
    expect(u.cpuSystemNs).to.be.below(u.cpuUserNs!);
    // The child leads no group: no process has its pid as its group id.
    expect(readProcessGroupUsage(busy).rss).to.equal(0);
  });

  it('a group with no processes uses nothing', () => {
    expect(readProcessGroupUsage(2 ** 22 + 7)).to.deep.equal({ rss: 0, swap: 0, cpuUserNs: 0, cpuSystemNs: 0, cpuTotalNs: 0 });
  });

  it('the stats reader gives CPU percent since the task started, then since the last look; forget starts over', () => {
    let now = Date.now();
    const reader = new CgroupStatsReader(() => now);
    const startedAt = now - 60_000;
    const first = reader.readProcessGroup('t', leader.pid!, startedAt);
    expect(first.timestamp).to.equal(now);
    expect(first.resourceUsage.memoryStats.measured).to.deep.equal(['RSS', 'Swap']);
    expect(first.resourceUsage.cpuStats.percent).to.be.above(0);
    now += 1;
    const again = reader.readProcessGroup('t', leader.pid!, startedAt);
    // Over 1 ms rather than a minute: a far higher percent.
    expect(again.resourceUsage.cpuStats.percent).to.not.equal(first.resourceUsage.cpuStats.percent);
    reader.forget('t');
    now += 1;
    const fresh = reader.readProcessGroup('t', leader.pid!, startedAt);
    // Measured from the start again: the same minute-long average, not the last 1 ms.
    expect(fresh.resourceUsage.cpuStats.percent).to.be.closeTo(first.resourceUsage.cpuStats.percent, 0.1);
    expect(fresh.resourceUsage.cpuStats.totalTicks).to.be.closeTo((fresh.resourceUsage.cpuStats.percent / 100) * mhzPerCore(), 1e-6);
  });

  it('mhzPerCore reads the clock from /proc/cpuinfo once; unmeasured is zeros at the time given', () => {
    const m = /^cpu MHz\s*:\s*([\d.]+)/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    expect(mhzPerCore()).to.equal(m ? Math.round(Number(m[1])) : 1000);
    expect(unmeasured(1234)).to.deep.equal({ resourceUsage: emptyUsage(), timestamp: 1234 });
  });
});
