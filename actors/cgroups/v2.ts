/**
 * cgroup v2: the limit files a task's cgroup gets, and the raw usage read back from it. One
 * directory per task (`paths.unified`); controllers must be enabled by the parents.
 * @module
 */
import { join } from 'node:path';
import { formatCpuList, sharesToWeight, type CgroupLimits } from '../../machines/policy/cgroup-limits.ts';
import { readKeyed, readNumber, writeIn } from './fsutil.ts';
import type { RawUsage } from './raw-usage.ts';
import type { TaskCgroup } from './types.ts';

/**
 * Writes `limits` into a v2 task cgroup, each only when its controller is enabled. Throws on a
 * failed write of a limit the task asked for.
 */
export function writeLimitsV2(dir: string, controllers: readonly string[], limits: CgroupLimits, cpuset?: number[]): void {
  const has = (c: string) => controllers.includes(c);
  if (has('memory')) {
    if (limits.memoryMaxBytes !== undefined) {
      writeIn(dir, 'memory.max', limits.memoryMaxBytes);
      try {
        writeIn(dir, 'memory.swap.max', 0); // as Nomad: no swapping under a limit (best effort)
      } catch {}
    }
    if (limits.memoryLowBytes !== undefined) writeIn(dir, 'memory.low', limits.memoryLowBytes);
  }
  if (has('cpu') && limits.cpuShares !== undefined) writeIn(dir, 'cpu.weight', sharesToWeight(limits.cpuShares));
  if (has('cpuset') && cpuset?.length) writeIn(dir, 'cpuset.cpus', formatCpuList(cpuset));
  if (has('pids') && limits.pidsMax !== undefined) writeIn(dir, 'pids.max', limits.pidsMax);
}

/** Reads a v2 task cgroup's raw usage; fields it cannot read stay undefined. */
export function readUsageV2(cg: TaskCgroup): RawUsage {
  const out: RawUsage = {};
  const dir = cg.paths.unified!;
  const mem = readKeyed(join(dir, 'memory.stat'));
  if (mem) {
    out.rss = mem.anon;
    out.cache = mem.file;
  }
  out.usage = readNumber(join(dir, 'memory.current'));
  out.maxUsage = readNumber(join(dir, 'memory.peak'));
  out.swap = readNumber(join(dir, 'memory.swap.current'));
  // cpu.stat's usage lines exist even without the cpu controller.
  const cpu = readKeyed(join(dir, 'cpu.stat'));
  if (cpu) {
    if (cpu.usage_usec !== undefined) out.cpuTotalNs = cpu.usage_usec * 1000;
    if (cpu.user_usec !== undefined) out.cpuUserNs = cpu.user_usec * 1000;
    if (cpu.system_usec !== undefined) out.cpuSystemNs = cpu.system_usec * 1000;
    out.throttledPeriods = cpu.nr_throttled;
    if (cpu.throttled_usec !== undefined) out.throttledTimeNs = cpu.throttled_usec * 1000;
  }
  return out;
}
