/**
 * statfs usage as the collector reads it, on a real tmpfs of known size and inode count (root):
 * inodes in use over the total, the way `df -i` counts them.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { statfsUsage } from '../../../actors/gc/fs-usage.ts';

describe('gc: statfs usage on a real tmpfs (root)', function () {
  before(function () {
    if (process.geteuid?.() !== 0) {
      console.log('    (skipped: mounting a tmpfs needs root)');
      this.skip();
    }
  });

  it('a tmpfs of 100 inodes holding its root and 49 files reads 50 % of its inodes and no disk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-gc-inodes-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,nr_inodes=100', 'tmpfs', dir]);
    try {
      for (let i = 0; i < 49; i++) writeFileSync(join(dir, `f${i}`), '');
      expect(await statfsUsage(dir)).to.deep.equal({ diskUsedPercent: 0, inodesUsedPercent: 50 });
    } finally {
      execFileSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
