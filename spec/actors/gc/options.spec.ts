/**
 * The gc options a client is created with: Nomad's defaults, the edges each range accepts, the
 * values it refuses and the message that says why; and statfs usage of a filesystem without
 * blocks or inodes.
 */
import { expect } from 'chai';
import { resolveGcOptions, statfsUsage, type GcClientOptions } from '../../../actors/gc/index.ts';
import { InvalidClientOptionError } from '../../../model/errors.ts';

describe('gc options', () => {
  it("no options: Nomad's defaults (every minute, 80 % disk, 70 % inodes, 50 allocs, 2 destroys) and statfs", () => {
    const s = resolveGcOptions({});
    expect(s.intervalMs).to.equal(60_000);
    expect(s.thresholds).to.deep.equal({ diskUsageThreshold: 80, inodeUsageThreshold: 70, maxAllocs: 50 });
    expect(s.parallelDestroys).to.equal(2);
    expect(s.readUsage).to.equal(statfsUsage);
  });

  it('takes the edges of each range as given, and the reader passed in', () => {
    const readUsage = async () => ({ diskUsedPercent: 1, inodesUsedPercent: 2 });
    const low = resolveGcOptions({
      gcIntervalMs: 0,
      gcDiskUsageThreshold: 0,
      gcInodeUsageThreshold: 0,
      gcMaxAllocs: 0,
      gcParallelDestroys: 1,
      gcUsageReader: readUsage,
    });
    expect(low).to.deep.equal({
      intervalMs: 0,
      thresholds: { diskUsageThreshold: 0, inodeUsageThreshold: 0, maxAllocs: 0 },
      parallelDestroys: 1,
      readUsage,
    });
    const high = resolveGcOptions({ gcIntervalMs: 7, gcDiskUsageThreshold: 100, gcInodeUsageThreshold: 100, gcMaxAllocs: Infinity, gcParallelDestroys: 9 });
    expect(high.intervalMs).to.equal(7);
    expect(high.thresholds).to.deep.equal({ diskUsageThreshold: 100, inodeUsageThreshold: 100, maxAllocs: Infinity });
    expect(high.parallelDestroys).to.equal(9);
  });

  it('refuses each value outside its range, naming the option, the rule and the value', () => {
    const bad: Array<[GcClientOptions, string]> = [
      [{ gcIntervalMs: -1 }, 'options.gcIntervalMs must be a finite number of ms >= 0 (got -1)'],
      [{ gcIntervalMs: Infinity }, 'options.gcIntervalMs must be a finite number of ms >= 0 (got Infinity)'],
      [{ gcIntervalMs: NaN }, 'options.gcIntervalMs must be a finite number of ms >= 0 (got NaN)'],
      [{ gcIntervalMs: '5' as unknown as number }, 'options.gcIntervalMs must be a finite number of ms >= 0 (got 5)'],
      [{ gcDiskUsageThreshold: '50' as unknown as number }, 'options.gcDiskUsageThreshold must be a percentage between 0 and 100 (got 50)'],
      [{ gcDiskUsageThreshold: -0.5 }, 'options.gcDiskUsageThreshold must be a percentage between 0 and 100 (got -0.5)'],
      [{ gcDiskUsageThreshold: 100.5 }, 'options.gcDiskUsageThreshold must be a percentage between 0 and 100 (got 100.5)'],
      [{ gcInodeUsageThreshold: -0.5 }, 'options.gcInodeUsageThreshold must be a percentage between 0 and 100 (got -0.5)'],
      [{ gcInodeUsageThreshold: 100.5 }, 'options.gcInodeUsageThreshold must be a percentage between 0 and 100 (got 100.5)'],
      [{ gcMaxAllocs: -1 }, 'options.gcMaxAllocs must be a whole number >= 0 or Infinity (got -1)'],
      [{ gcMaxAllocs: 1.5 }, 'options.gcMaxAllocs must be a whole number >= 0 or Infinity (got 1.5)'],
      [{ gcMaxAllocs: -Infinity }, 'options.gcMaxAllocs must be a whole number >= 0 or Infinity (got -Infinity)'],
      [{ gcParallelDestroys: 0 }, 'options.gcParallelDestroys must be a whole number >= 1 (got 0)'],
      [{ gcParallelDestroys: 1.5 }, 'options.gcParallelDestroys must be a whole number >= 1 (got 1.5)'],
      [{ gcParallelDestroys: Infinity }, 'options.gcParallelDestroys must be a whole number >= 1 (got Infinity)'],
    ];
    for (const [opts, message] of bad) {
      expect(() => resolveGcOptions(opts), JSON.stringify(opts)).to.throw(InvalidClientOptionError, `createClient: ${message}`);
    }
  });

  it('statfs usage of a filesystem with no blocks and no inodes (/proc) reads 0 % of both', async () => {
    expect(await statfsUsage('/proc')).to.deep.equal({ diskUsedPercent: 0, inodesUsedPercent: 0 });
  });
});
