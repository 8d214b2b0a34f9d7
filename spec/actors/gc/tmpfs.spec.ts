import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mountTmpfs, unmount } from '../../../actors/allocdir/mounts.ts';
import { createClient } from '../../../actors/client/client.ts';
import { statfsUsage } from '../../../actors/gc/fs-usage.ts';
import { HeldPeriodClock } from '../../support/held-clock.ts';
import { record } from '../../support/temp-client.ts';
import { terminalAllocs } from './support.ts';

const PERIOD = 3_600_019;

describe('client gc on a real filesystem (root: a small tmpfs it fills)', function () {
  this.timeout(30_000);

  before(function () {
    if (process.geteuid?.() !== 0) {
      console.log('    (skipped: mounting a tmpfs needs root)');
      this.skip();
    }
  });

  it('reads usage with statfs and collects the oldest terminal allocs until the disk is under 80 %', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-gcfs-'));
    const allocDir = join(dir, 'alloc');
    mkdirSync(allocDir);
    await mountTmpfs(allocDir, 8);
    const clock = new HeldPeriodClock(PERIOD);
    const client = createClient({ dataDir: dir, clock, gcIntervalMs: PERIOD, gcMaxAllocs: Infinity });
    try {
      const collected = record(client, 'gc.collected');
      const done = await terminalAllocs(client, 5);
      // 1.5 MB of sticky data each: 7.5 MB of 8 MB.
      for (const r of done) writeFileSync(join(r.allocDir.sharedDir, 'data', 'blob'), Buffer.alloc(1536 << 10, 1));
      const before = await statfsUsage(allocDir);
      expect(before.diskUsedPercent).to.be.above(90);
      await clock.fire();
      const after = await statfsUsage(allocDir);
      expect(after.diskUsedPercent).to.be.at.most(80);
      expect(collected.items.map((m) => [m.allocId, m.reason])).to.deep.equal([[done[0]!.allocId, 'disk']]);
      expect(client.runners().map((r) => r.allocId)).to.deep.equal(done.slice(1).map((r) => r.allocId));
    } finally {
      await Promise.allSettled(client.runners().map((r) => r.destroy()));
      await client.shutdown();
      await unmount(allocDir, { lazy: true }).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
