/**
 * How a task's `resources` become cgroup limits, as Nomad's executor maps them. Pure: no I/O.
 *
 * | resource                  | cgroup v1                          | cgroup v2                  |
 * |---------------------------|------------------------------------|----------------------------|
 * | memoryMB (alone)          | memory.limit_in_bytes              | memory.max                 |
 * | memoryMB + memoryMaxMB    | soft_limit_in_bytes = memoryMB,    | memory.low = memoryMB,     |
 * |                           | limit_in_bytes = memoryMaxMB       | memory.max = memoryMaxMB   |
 * | memoryMB + memoryMaxMB -1 | soft_limit_in_bytes = memoryMB,    | memory.low = memoryMB,     |
 * | (Nomad's MemoryNoLimit)   | no hard limit                      | memory.max stays max       |
 * | cpu (MHz)                 | cpu.shares = cpu (clamped 2…262144)| cpu.weight (shares mapped) |
 * | cores                     | cpuset.cpus (cores picked)         | cpuset.cpus                |
 * | pids limit (client-wide)  | pids.max                           | pids.max                   |
 * @module
 */
import { MEMORY_NO_LIMIT } from '../../model/memory.ts';
import type { Resources } from '../../model/types.ts';

/** The kernel's lower bound on cpu.shares. */
export const MIN_CPU_SHARES = 2;
/** The kernel's upper bound on cpu.shares. */
export const MAX_CPU_SHARES = 262_144;

/** Limits to write for one task. Absent fields are not limited. Plain data. */
export interface CgroupLimits {
  /** Hard memory limit (bytes). */
  memoryMaxBytes?: number;
  /** Soft limit / reservation (bytes), only with memory oversubscription. */
  memoryLowBytes?: number;
  /** v1 cpu.shares (v2 writes `sharesToWeight` of it). */
  cpuShares?: number;
  /** Number of whole cores to pin the task to. */
  cores?: number;
  /** Most processes the task may have. */
  pidsMax?: number;
}

const MB = 1024 * 1024;

/**
 * The limits for a task's resources. `pidsLimit` is the client-wide pids limit (0 or absent: none).
 * @example
 * cgroupLimits({ cpu: 500, memoryMB: 256, memoryMaxMB: 512 })
 * // { memoryMaxBytes: 536870912, memoryLowBytes: 268435456, cpuShares: 500 }
 */
export function cgroupLimits(res: Resources | undefined, pidsLimit?: number): CgroupLimits {
  const out: CgroupLimits = {};
  const mem = res?.memoryMB ?? 0;
  const max = res?.memoryMaxMB ?? 0;
  if (max === MEMORY_NO_LIMIT) {
    // Nomad's executor: memory is the reservation, and nothing caps the task below the node.
    if (mem > 0) out.memoryLowBytes = mem * MB;
  } else if (max > 0 && max > mem) {
    out.memoryMaxBytes = max * MB;
    if (mem > 0) out.memoryLowBytes = mem * MB;
  } else if (mem > 0) {
    out.memoryMaxBytes = mem * MB;
  }
  if (res?.cpu !== undefined && res.cpu > 0) out.cpuShares = Math.min(MAX_CPU_SHARES, Math.max(MIN_CPU_SHARES, Math.round(res.cpu)));
  if (res?.cores !== undefined && res.cores > 0) out.cores = Math.floor(res.cores);
  if (pidsLimit !== undefined && pidsLimit > 0) out.pidsMax = Math.floor(pidsLimit);
  return out;
}

/** cgroup v1 cpu.shares → v2 cpu.weight (runc's linear mapping of [2, 262144] onto [1, 10000]). */
export function sharesToWeight(shares: number): number {
  if (shares <= 0) return 0;
  const s = Math.min(MAX_CPU_SHARES, Math.max(MIN_CPU_SHARES, shares));
  return 1 + Math.floor(((s - 2) * 9999) / 262_142);
}

/** Parses a kernel cpu list ("0-3,6") into core numbers. */
export function parseCpuList(text: string): number[] {
  const out: number[] = [];
  for (const part of text.trim().split(',')) {
    if (!part) continue;
    const [a, b] = part.split('-').map(Number);
    if (!Number.isInteger(a)) continue;
    for (let i = a!; i <= (Number.isInteger(b) ? b! : a!); i++) out.push(i);
  }
  return out;
}

/** Formats core numbers as a kernel cpu list: [0, 1, 2, 5] → "0-2,5". */
export function formatCpuList(cores: readonly number[]): string {
  const s = [...new Set(cores)].sort((x, y) => x - y);
  const parts: string[] = [];
  for (let i = 0; i < s.length; i++) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j]! + 1) j++;
    parts.push(j > i ? `${s[i]}-${s[j]}` : `${s[i]}`);
    i = j;
  }
  return parts.join(',');
}

/**
 * Picks `n` cores for a task: the least used of `available` (fewest other berth tasks pinned
 * there; lowest number first on a tie). Returns an error text when the node has fewer than `n`.
 * berth has no scheduler to reserve cores exclusively, so two tasks may share a core when the
 * node runs out; the least-used choice keeps that rare.
 */
export function pickCores(available: readonly number[], inUse: Readonly<Record<number, number>>, n: number): number[] | { error: string } {
  if (n > available.length) return { error: `task asks for ${n} cores but only ${available.length} are available (${formatCpuList(available)})` };
  return [...available]
    .sort((a, b) => (inUse[a] ?? 0) - (inUse[b] ?? 0) || a - b)
    .slice(0, n)
    .sort((a, b) => a - b);
}

/** Which controller enforces each limit. */
const CONTROLLER_OF: Record<keyof CgroupLimits, string> = {
  memoryMaxBytes: 'memory',
  memoryLowBytes: 'memory',
  cpuShares: 'cpu',
  cores: 'cpuset',
  pidsMax: 'pids',
};

/**
 * Keeps the limits the available controllers can enforce; `dropped` names the controllers a
 * limit needed but the hierarchy does not offer (a controller-less v2 mount drops them all).
 */
export function enforceableLimits(limits: CgroupLimits, controllers: readonly string[]): { limits: CgroupLimits; dropped: string[] } {
  const out: CgroupLimits = {};
  const dropped = new Set<string>();
  for (const [k, v] of Object.entries(limits) as Array<[keyof CgroupLimits, number]>) {
    if (controllers.includes(CONTROLLER_OF[k])) out[k] = v;
    else dropped.add(CONTROLLER_OF[k]);
  }
  return { limits: out, dropped: [...dropped] };
}
