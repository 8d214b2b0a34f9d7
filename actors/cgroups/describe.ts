/**
 * Human-readable lines about cgroups, for the `Driver` task event and the bus.
 * @module
 */
import { formatCpuList } from '../../machines/policy/cgroup-limits.ts';
import type { TaskCgroup } from './types.ts';

const mb = (bytes: number) => `${Math.round(bytes / 1048576)} MB`;

/** What a task's cgroup enforces, e.g. "cgroup v1: memory 256 MB hard, cpu shares 500". */
export function describeTaskCgroup(cg: TaskCgroup): string {
  const l = cg.limits;
  const parts: string[] = [];
  if (l.memoryMaxBytes !== undefined) {
    parts.push(l.memoryLowBytes !== undefined ? `memory ${mb(l.memoryLowBytes)} soft / ${mb(l.memoryMaxBytes)} hard` : `memory ${mb(l.memoryMaxBytes)} hard`);
  } else if (l.memoryLowBytes !== undefined) {
    parts.push(`memory ${mb(l.memoryLowBytes)} soft / no hard limit`);
  }
  if (l.cpuShares !== undefined) parts.push(cg.version === 'v1' ? `cpu shares ${l.cpuShares}` : `cpu weight from ${l.cpuShares} shares`);
  if (cg.cpuset?.length) parts.push(`cores ${formatCpuList(cg.cpuset)}`);
  if (l.pidsMax !== undefined) parts.push(`pids ${l.pidsMax}`);
  const what = parts.length ? parts.join(', ') : 'no limits (tracking, clean kills and stats)';
  const missing = cg.unenforced?.length ? `; not enforced (no ${cg.unenforced.join(', ')} controller)` : '';
  return `cgroup ${cg.version}: ${what}${missing}`;
}

/**
 * The `Driver` task event message about a started task's cgroup, from its handle state
 * (`cgroup` or `cgroupNote`); undefined when the driver does not do cgroups.
 */
export function cgroupEventMessage(state: Record<string, unknown>): string | undefined {
  const cg = state.cgroup as TaskCgroup | undefined;
  if (cg && typeof cg === 'object' && cg.paths) return `resources: ${describeTaskCgroup(cg)}`;
  if (typeof state.cgroupNote === 'string') return `resources: no cgroup: ${state.cgroupNote}; no limits, kills by process group only`;
  return undefined;
}
