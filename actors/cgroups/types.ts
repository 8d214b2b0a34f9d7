/**
 * Plain-JSON shapes of berth's cgroups: what detection found ({@link CgroupLayout}) and one task's
 * cgroup as saved in its driver handle ({@link TaskCgroup}), so a later client can kill, read
 * and remove it after a host restart.
 *
 * ```
 *  v1: <mount of each controller>/<berth's own cgroup>/<parent>/<allocId>/<task>
 *        e.g. /sys/fs/cgroup/memory/berth/3f0c…/web   (and cpu/, cpuacct/, cpuset/, pids/, freezer/)
 *  v2: <unified mount>/<berth's own cgroup>/<parent>/<allocId>/<task>
 * ```
 * @module
 */
import type { CgroupLimits } from '../../machines/policy/cgroup-limits.ts';

/** Which hierarchy a cgroup lives in. */
export type CgroupVersion = 'v1' | 'v2';

/** v1 controllers berth uses (each has its own mount). */
export const V1_CONTROLLERS = ['memory', 'cpu', 'cpuacct', 'cpuset', 'pids', 'freezer'] as const;

/** The key of the single v2 hierarchy in path maps. */
export const UNIFIED = 'unified';

/** What detection found: where berth puts its cgroups and what it can do there. Plain data. */
export interface CgroupLayout {
  version: CgroupVersion;
  /** Controller (v1) or `unified` (v2) → berth's parent cgroup dir (absolute). */
  parents: Record<string, string>;
  /** Controller (v1) or `unified` (v2) → the hierarchy's mount point. */
  mounts: Record<string, string>;
  /** Controllers limits and stats can use (v2: enabled for berth's children). */
  controllers: string[];
  /** v2: cgroup.kill exists (kernel 5.14+). v1 always kills through the freezer when it has one. */
  canKill: boolean;
  /** Cores tasks may be pinned to (the parent's effective cpuset). */
  cpus: number[];
}

/** One task's cgroup, saved in `TaskHandle.state.cgroup`. Plain data. */
export interface TaskCgroup {
  version: CgroupVersion;
  /** Controller (v1) or `unified` (v2) → the task's cgroup dir. */
  paths: Record<string, string>;
  /** Same keys → the hierarchy's mount point (to find the executor's own cgroup again). */
  mounts: Record<string, string>;
  /** Controllers usable for this task (see {@link CgroupLayout.controllers}). */
  controllers: string[];
  /** v2 cgroup.kill available. */
  canKill: boolean;
  /** The limits written (empty when the task asked for none or the driver applies none). */
  limits: CgroupLimits;
  /** Controllers the task's resources needed but this hierarchy does not offer (limits not enforced). */
  unenforced?: string[];
  /** Cores the task is pinned to, when it asked for `cores`. */
  cpuset?: number[];
  /** ms since the epoch, when the cgroup was made (the first CPU percent is measured from it). */
  createdAt: number;
}
