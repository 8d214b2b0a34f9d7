/**
 * Property: a host killed with SIGKILL, its state store damaged in a random one of the ways of
 * `spec/actors/state/damage.spec.ts` (with random offsets and bytes), then restored twice: no task
 * orphaned, none duplicated, no untyped error, the second restore like the first. Real processes,
 * so a few runs in `npm test`; `BERTH_SOAK=<runs>` for a soak (`BERTH_SOAK_LOG=<file>` appends
 * one line per run, to count a soak that is stopped early).
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mountsUnder, unmount } from '../../actors/allocdir/mounts.ts';
import { supervisorSocketPath } from '../../actors/drivers/executor/client.ts';
import type { Client } from '../../actors/client/types.ts';
import { crashedHost, DAMAGE, procsWith, restoreOnce } from '../actors/state/support/damage.ts';
import { propertyRuns, propertyTimeout } from './settings.ts';

describe('property: a damaged store after kill -9 never orphans or duplicates a task', function () {
  this.timeout(propertyTimeout(120_000));
  it('any damage, any seed: one owner per live task, typed errors, a second restore like the first', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(DAMAGE)), fc.integer({ min: 1, max: 2 ** 31 - 2 }), async (damageName, seed0) => {
        const dataDir = mkdtempSync(join(tmpdir(), 'berth-damage-prop-'));
        const opened: Client[] = [];
        try {
          const ids = await crashedHost(dataDir);
          // The supervisor's socket; a long data dir puts it under /tmp, outside the data dir.
          const sockets = [supervisorSocketPath(join(dataDir, 'client', 'supervisor'))];
          let seed = seed0;
          DAMAGE[damageName]!(join(dataDir, 'client', 'state.db'), ids, () => (seed = (seed * 16807) % 2147483647) / 2147483647);
          const first = await restoreOnce(dataDir, ids, opened);
          for (const label of Object.keys(ids))
            if (!first.restored.includes(ids[label]!)) expect(first.reported, `${label}: lost alloc reported`).to.include(label);
          await opened.pop()!.shutdown();
          const second = await restoreOnce(dataDir, ids, opened);
          expect(second.restored).to.deep.equal(first.restored);
          expect(second.live).to.deep.equal(first.live);
          expect(second.starts).to.deep.equal(first.starts);
          const c = opened.pop()!;
          await Promise.all(c.runners().map((r) => r.destroy()));
          await c.shutdown();
          for (let i = 0; i < 100 && procsWith(dataDir).length; i++) await new Promise((r) => setTimeout(r, 20));
          expect(procsWith(dataDir), 'processes left after destroying every alloc').to.deep.equal([]);
          expect(
            sockets.filter((f) => existsSync(f)),
            'a supervisor socket left after destroying every alloc',
          ).to.deep.equal([]);
          if (process.env.BERTH_SOAK_LOG) appendFileSync(process.env.BERTH_SOAK_LOG, `${++n} ok ${damageName}\n`);
        } catch (e) {
          if (process.env.BERTH_SOAK_LOG) appendFileSync(process.env.BERTH_SOAK_LOG, `${++n} FAIL ${damageName} seed ${seed0}: ${(e as Error).message}\n`);
          throw e;
        } finally {
          for (const c of opened) {
            await Promise.allSettled(c.runners().map((r) => r.destroy()));
            await c.shutdown();
          }
          for (const pid of procsWith(dataDir)) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {}
          }
          for (const m of await mountsUnder(dataDir)) await unmount(m, { lazy: true }).catch(() => {});
          rmSync(dataDir, { recursive: true, force: true });
        }
      }),
      propertyRuns(3),
    );
  });
});
