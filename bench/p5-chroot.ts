/**
 * P5, chroot build: the default chroot_env embedded into a task dir by `TaskDir.build({ chroot })`,
 * beside `cp -al` of the same directories on the same filesystem; then a rebuild over the
 * existing chroot, against the fresh build. Root only (skipped with a message otherwise).
 * `--p5-map small` (the quick default) embeds /etc and /usr/bin only.
 */
import { existsSync, lstatSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { AllocDir } from '../actors/allocdir/alloc-dir.ts';
import { defaultChrootEnv } from '../actors/allocdir/default-chroot.ts';
import { shutdownMountHelper } from '../actors/allocdir/mounts.ts';
import { safeRemove, tempDir } from './lib/fsutil.ts';
import { sh } from './lib/proc.ts';
import { ratioResult, skipped, type BenchOptions, type BenchResult } from './lib/results.ts';
import { now } from './lib/stats.ts';

const SMALL: Record<string, string> = { '/etc': '/etc', '/usr/bin': '/usr/bin' };

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  const which = opts.args['p5-map'] ?? (opts.quick ? 'small' : 'default');
  const map = which === 'small' ? SMALL : { ...defaultChrootEnv };
  if (process.geteuid?.() !== 0)
    return [skipped('P5', `chroot build (${which} map)`, 'not root: a chroot build needs root (owners, mounts); run as root to measure')];
  const dir = tempDir('p5');
  try {
    // Floor: cp -al of the same sources to the same destinations, on the same filesystem.
    const floorDir = path.join(dir, 'cp');
    mkdirSync(floorDir);
    await sh('sync');
    const t0 = now();
    for (const [src, dst] of Object.entries(map)) {
      if (!existsSync(src)) continue;
      const target = path.join(floorDir, dst);
      mkdirSync(path.dirname(target), { recursive: true });
      await sh(`cp -al ${JSON.stringify(src)} ${JSON.stringify(target)}`);
    }
    const cpMs = now() - t0;
    opts.log(`P5 cp -al (${which}): ${cpMs.toFixed(0)} ms`);
    const rmCpMs = await sh(`rm -rf ${JSON.stringify(floorDir)}`);

    const ad = new AllocDir(path.join(dir, 'alloc'), 'p5-alloc');
    await ad.build();
    const td = ad.newTaskDir('web');
    await sh('sync');
    const t1 = now();
    await td.build({ chroot: map });
    const buildMs = now() - t1;
    const stats = td.lastChrootStats;
    opts.log(`P5 berth build: ${buildMs.toFixed(0)} ms (${stats?.files} files, ${stats?.dirs} dirs, ${stats?.symlinks} symlinks)`);
    const t2 = now();
    await td.build({ chroot: map });
    const rebuildMs = now() - t2;
    const rstats = td.lastChrootStats;
    if (!lstatSync(path.join(td.dir, 'etc')).isDirectory()) throw new Error('chroot has no etc/');
    const t3 = now();
    await ad.destroy();
    const destroyMs = now() - t3;
    await shutdownMountHelper();
    return [
      ratioResult({
        id: 'P5',
        name: `chroot build (${which} map) vs cp -al`,
        unit: 'ms',
        value: buildMs,
        floor: cpMs,
        better: 'lower',
        limit: 1.5,
        details: { stats, rmCpMs, destroyMs },
      }),
      ratioResult({
        id: 'P5',
        name: `chroot rebuild over existing (${which} map) vs fresh build`,
        unit: 'ms',
        value: rebuildMs,
        floor: buildMs,
        better: 'lower',
        limit: 0.2,
        details: { stats: rstats },
      }),
    ];
  } finally {
    await safeRemove(dir);
  }
}
