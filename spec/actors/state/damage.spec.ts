/**
 * A damaged state store never orphans or duplicates a task: each way of `DAMAGE`
 * (support/damage.ts), after the host is killed with SIGKILL. See that file for what is checked.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mountsUnder, unmount } from '../../../actors/allocdir/mounts.ts';
import type { Client } from '../../../actors/client/types.ts';
import { crashedHost, DAMAGE, procsWith, restoreOnce } from './support/damage.ts';

describe('state store damage: no task orphaned, none duplicated, nothing untyped (root-free, real processes)', function () {
  this.timeout(60_000);
  const opened: Client[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const c of opened.splice(0)) {
      await Promise.allSettled(c.runners().map((r) => r.destroy()));
      await c.shutdown();
    }
    for (const d of dirs.splice(0)) {
      for (const pid of procsWith(d)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
      for (const m of await mountsUnder(d)) await unmount(m, { lazy: true }).catch(() => {});
      rmSync(d, { recursive: true, force: true });
    }
  });

  for (const [name, damage] of Object.entries(DAMAGE)) {
    it(name, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'berth-damage-'));
      dirs.push(dataDir);
      const ids = await crashedHost(dataDir);
      expect(procsWith(join(dataDir, 'runs-a')), 'the host left task a running').to.have.length(1);
      let seed = 7;
      damage(join(dataDir, 'client', 'state.db'), ids, () => (seed = (seed * 16807) % 2147483647) / 2147483647);
      const first = await restoreOnce(dataDir, ids, opened);
      for (const label of Object.keys(ids))
        if (!first.restored.includes(ids[label]!)) expect(first.reported, `task ${label}'s alloc was lost: its stop is reported`).to.include(label);
      // A second restore (after a clean shutdown that leaves tasks running) sees the same.
      const c1 = opened.pop()!;
      await c1.shutdown();
      const second = await restoreOnce(dataDir, ids, opened);
      expect(second.restored).to.deep.equal(first.restored);
      expect(second.live).to.deep.equal(first.live);
      expect(second.starts, 'the second restore started nothing').to.deep.equal(first.starts);
      expect(second.typedFailures, 'the repaired store opens cleanly').to.equal(0);
      const c2 = opened.pop()!;
      await Promise.all(c2.runners().map((r) => r.destroy()));
      await c2.shutdown();
      for (let i = 0; i < 100 && procsWith(dataDir).length; i++) await new Promise((r) => setTimeout(r, 20));
      expect(procsWith(dataDir), 'processes left after destroying every alloc').to.deep.equal([]);
    });
  }
});
