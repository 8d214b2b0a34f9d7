import { expect } from 'chai';
import { formatUsageLine } from '../../../actors/cgroups/format-usage.ts';
import { emptyUsage } from '../../../model/usage.ts';

describe('formatUsageLine', () => {
  it('prints measured fields and dashes for the rest', () => {
    const u = emptyUsage();
    expect(formatUsageLine('web', u)).to.equal('web: cpu -, mem rss -, usage -, max -');
    u.cpuStats = {
      systemMode: 1.5,
      userMode: 11,
      totalTicks: 325.4,
      percent: 12.5,
      throttledPeriods: 2,
      throttledTime: 3e6,
      measured: ['System Mode', 'User Mode', 'Throttled Periods', 'Throttled Time', 'Percent'],
    };
    u.memoryStats = { rss: 45.2 * 1048576, cache: 0, swap: 0, usage: 48 * 1048576, maxUsage: 50.1 * 1048576, measured: ['RSS', 'Usage', 'Max Usage'] };
    expect(formatUsageLine('web', u)).to.equal(
      'web: cpu 12.5% (325 MHz, user 11.0%, sys 1.5%), throttled 2x 3 ms, mem rss 45.2 MiB, usage 48.0 MiB, max 50.1 MiB',
    );
  });
});
