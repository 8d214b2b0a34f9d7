/**
 * Makes task cgroups under the detected layout: `<parent>/<allocId>/<task>` in each hierarchy,
 * with the limits the task's resources map to (see machines/policy/cgroup-limits.ts), and keeps
 * track of the cores it pinned tasks to. Removal needs no manager: a {@link TaskCgroup} is enough
 * (procs.mjs `removeCgroup`), so a restored task's cgroup goes with it.
 * @module
 */
import fs from 'node:fs';
import { dirname, join } from 'node:path';
import { MAX_CPU_SHARES, cgroupLimits, enforceableLimits, pickCores } from '../../machines/policy/cgroup-limits.ts';
import type { Resources } from '../../model/types.ts';
import { initCpusetAsync } from './detect.ts';
import { KeyedQueue } from './keyed-queue.ts';
import { CgroupSetupError } from './errors.ts';
import { readNumber, writeIn } from './fsutil.ts';
import { removeCgroup } from './procs.mjs';
import type { CgroupLayout, TaskCgroup } from './types.ts';
import { writeLimitsV1 } from './v1.ts';
import { writeLimitsV2 } from './v2.ts';
import { errorText } from '../../model/error-text.ts';

/** What a task cgroup is made for. */
export interface TaskCgroupInput {
  allocId: string;
  taskName: string;
  resources?: Resources;
  /** false: a cgroup for tracking, killing and stats only (raw_exec with limits off). */
  applyLimits: boolean;
}

/** Makes and forgets task cgroups. */
export interface CgroupManager {
  readonly layout: CgroupLayout;
  /**
   * Makes the task's cgroup and writes its limits. Throws {@link CgroupSetupError}. `record`, when
   * given, gets the cgroup's description before its first directory is made: a host that dies
   * while the cgroup is being made leaves a record a restore can remove it by.
   */
  create(input: TaskCgroupInput, record?: (cg: TaskCgroup) => void): Promise<TaskCgroup>;
  /** Counts a restored task's pinned cores again. */
  adopt(cg: TaskCgroup): void;
  /** Kills what is left in the cgroup, removes it, and releases its cores. */
  remove(cg: TaskCgroup): Promise<boolean>;
}

/** Options of {@link createCgroupManager}. */
export interface CgroupManagerOptions {
  /** pids.max for every task; default none. */
  pidsLimit?: number;
  now?: () => number;
}

/**
 * mkdir -p that survives a sibling task removing the alloc's cgroup at the same moment; returns
 * the first directory it made (undefined when `dir` was there already).
 */
async function makeDir(dir: string): Promise<string | undefined> {
  for (let i = 0; ; i++) {
    try {
      return await fs.promises.mkdir(dir, { recursive: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || i >= 3) throw e;
    }
  }
}

/**
 * CPU shares only compare between siblings, and a task's siblings are its alloc's other tasks:
 * so the alloc's cgroup gets the sum of its tasks' shares (v2: weights), and tasks of different
 * allocs get CPU in the ratio of their `cpu`, as when they are siblings in Nomad's flat layout.
 */
function syncAllocCpu(cg: TaskCgroup): void {
  const dir = cg.version === 'v1' ? cg.paths.cpu : cg.controllers.includes('cpu') ? cg.paths.unified : undefined;
  if (!dir) return;
  const file = cg.version === 'v1' ? 'cpu.shares' : 'cpu.weight';
  const alloc = dirname(dir);
  let sum = 0;
  let entries: fs.Dirent[] = [];
  try {
    entries = fs.readdirSync(alloc, { withFileTypes: true });
  } catch {
    return; // the alloc's cgroup is gone
  }
  for (const e of entries) if (e.isDirectory()) sum += readNumber(join(alloc, e.name, file)) ?? 0;
  if (sum <= 0) return;
  try {
    writeIn(alloc, file, Math.min(sum, cg.version === 'v1' ? MAX_CPU_SHARES : 10_000));
  } catch {}
}

/** A manager for one detected layout. */
export function createCgroupManager(layout: CgroupLayout, opts: CgroupManagerOptions = {}): CgroupManager {
  const now = opts.now ?? Date.now;
  const coresInUse: Record<number, number> = {};
  const count = (cores: number[] | undefined, by: number) => {
    for (const c of cores ?? []) coresInUse[c] = Math.max(0, (coresInUse[c] ?? 0) + by);
  };
  const allocTurns = new KeyedQueue();
  return {
    layout,
    async create(input, record) {
      const asked = input.applyLimits ? cgroupLimits(input.resources, opts.pidsLimit) : {};
      const { limits, dropped } = enforceableLimits(asked, layout.controllers);
      let cpuset: number[] | undefined;
      if (limits.cores) {
        const picked = pickCores(layout.cpus, coresInUse, limits.cores);
        if (!Array.isArray(picked)) throw new CgroupSetupError(`cannot pin task "${input.taskName}": ${picked.error}`);
        cpuset = picked;
      }
      const paths: Record<string, string> = {};
      const mounts: Record<string, string> = {};
      const cg: TaskCgroup = {
        version: layout.version,
        paths,
        mounts,
        controllers: [...layout.controllers],
        canKill: layout.canKill,
        limits,
        ...(cpuset ? { cpuset } : {}),
        ...(dropped.length ? { unenforced: dropped } : {}),
        createdAt: now(),
      };
      for (const [key, parent] of Object.entries(layout.parents)) {
        paths[key] = join(parent, input.allocId, input.taskName);
        mounts[key] = layout.mounts[key]!;
      }
      try {
        record?.(cg);
        // On the thread pool (cgroupfs writes on the event loop were the N = 1,000 profile's top
        // frame), one task of an alloc at a time: a sibling must not write its limits before the
        // task that made the alloc's cgroup has set it up (its cpuset, v2's subtree_control).
        await allocTurns.run(input.allocId, async () => {
          for (const [key, dir] of Object.entries(paths)) {
            const allocDir = dirname(dir);
            // The alloc's cgroup is set up by the task that makes it, not again by each sibling.
            const allocIsNew = (await makeDir(dir)) === allocDir;
            if (layout.version === 'v1' && key === 'cpuset') {
              if (allocIsNew) await initCpusetAsync(allocDir);
              await initCpusetAsync(dir);
            }
            if (layout.version === 'v2' && allocIsNew) {
              for (const c of layout.controllers) {
                try {
                  writeIn(allocDir, 'cgroup.subtree_control', `+${c}`);
                } catch {}
              }
            }
          }
        });
        if (layout.version === 'v1') writeLimitsV1(paths, limits, cpuset);
        else writeLimitsV2(paths.unified!, layout.controllers, limits, cpuset);
      } catch (e) {
        await removeCgroup(cg).catch(() => false);
        // The alloc's own cgroup, made on the way: removed when no other task uses it (rmdir
        // refuses a cgroup with children, so a sibling's stays).
        for (const parent of Object.values(layout.parents)) {
          try {
            fs.rmdirSync(join(parent, input.allocId));
          } catch {}
        }
        throw new CgroupSetupError(`failed to set up the cgroup of task "${input.taskName}": ${errorText(e)}`);
      }
      count(cpuset, 1);
      syncAllocCpu(cg);
      return cg;
    },
    adopt(cg) {
      count(cg.cpuset, 1);
    },
    async remove(cg) {
      const ok = await removeCgroup(cg);
      count(cg.cpuset, -1);
      syncAllocCpu(cg);
      return ok;
    },
  };
}
