/**
 * cgroup v1: the limit files a task's cgroup gets, and the raw usage read back from it. Each
 * controller has its own directory (`paths[controller]`).
 * @module
 */
import { join } from 'node:path';
import { formatCpuList, type CgroupLimits } from '../../machines/policy/cgroup-limits.ts';
import { readKeyed, readNumber, writeIn } from './fsutil.ts';
import type { RawUsage } from './raw-usage.ts';
import type { TaskCgroup } from './types.ts';

/** Writes `limits` into a v1 task cgroup. Throws on a failed write of a limit the task asked for. */
export function writeLimitsV1(paths: Record<string, string>, limits: CgroupLimits, cpuset?: number[]): void {
  const { memory, cpu, cpuset: cs, pids } = paths;
  if (memory) {
    if (limits.memoryMaxBytes !== undefined) writeIn(memory, 'memory.limit_in_bytes', limits.memoryMaxBytes);
    if (limits.memoryLowBytes !== undefined) writeIn(memory, 'memory.soft_limit_in_bytes', limits.memoryLowBytes);
    if (limits.memoryMaxBytes !== undefined) {
      // As Nomad: no swapping under a limit (best effort; not every kernel allows it).
      try {
        writeIn(memory, 'memory.swappiness', 0);
      } catch {}
    }
  }
  if (cpu && limits.cpuShares !== undefined) writeIn(cpu, 'cpu.shares', limits.cpuShares);
  if (cs && cpuset?.length) writeIn(cs, 'cpuset.cpus', formatCpuList(cpuset));
  if (pids && limits.pidsMax !== undefined) writeIn(pids, 'pids.max', limits.pidsMax);
}

/** USER_HZ: the unit of cpuacct.stat (100 on every Linux architecture berth runs on). */
const USER_HZ = 100;

/** Reads a v1 task cgroup's raw usage; fields it cannot read stay undefined. */
export function readUsageV1(cg: TaskCgroup): RawUsage {
  const out: RawUsage = {};
  const { memory, cpuacct, cpu } = cg.paths;
  if (memory) {
    const st = readKeyed(join(memory, 'memory.stat'));
    if (st) {
      out.rss = st.rss;
      out.cache = st.cache;
      out.swap = st.swap;
    }
    out.usage = readNumber(join(memory, 'memory.usage_in_bytes'));
    out.maxUsage = readNumber(join(memory, 'memory.max_usage_in_bytes'));
  }
  if (cpuacct) {
    out.cpuTotalNs = readNumber(join(cpuacct, 'cpuacct.usage'));
    const st = readKeyed(join(cpuacct, 'cpuacct.stat'));
    if (st?.user !== undefined) out.cpuUserNs = (st.user * 1e9) / USER_HZ;
    if (st?.system !== undefined) out.cpuSystemNs = (st.system * 1e9) / USER_HZ;
  }
  if (cpu) {
    const st = readKeyed(join(cpu, 'cpu.stat'));
    if (st) {
      out.throttledPeriods = st.nr_throttled;
      out.throttledTimeNs = st.throttled_time;
    }
  }
  return out;
}
