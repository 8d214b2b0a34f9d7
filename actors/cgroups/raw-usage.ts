/**
 * Raw counters read from a cgroup and their conversion into Nomad's {@link ResourceUsage}:
 * memory as read, CPU as percentages over the time since the previous sample.
 * @module
 */
import type { ResourceUsage } from '../../model/usage.ts';

/** Counters as read from cgroupfs; undefined = the hierarchy could not say. */
export interface RawUsage {
  rss?: number;
  cache?: number;
  swap?: number;
  usage?: number;
  maxUsage?: number;
  cpuTotalNs?: number;
  cpuUserNs?: number;
  cpuSystemNs?: number;
  throttledPeriods?: number;
  throttledTimeNs?: number;
}

/** The CPU counters of the previous sample (or of the cgroup's birth: all zero). */
export interface CpuSample {
  /** ms since the epoch. */
  at: number;
  totalNs: number;
  userNs: number;
  systemNs: number;
}

/**
 * Converts a raw reading at `now` into a ResourceUsage, CPU relative to `prev`. `mhzPerCore`
 * turns percent into ticks (MHz consumed), as Nomad's TotalTicks.
 */
export function toResourceUsage(raw: RawUsage, prev: CpuSample, now: number, mhzPerCore: number): { usage: ResourceUsage; sample: CpuSample } {
  const memMeasured: string[] = [];
  const mem = (v: number | undefined, name: string) => {
    if (v === undefined) return 0;
    memMeasured.push(name);
    return v;
  };
  const memoryStats = {
    rss: mem(raw.rss, 'RSS'),
    cache: mem(raw.cache, 'Cache'),
    swap: mem(raw.swap, 'Swap'),
    usage: mem(raw.usage, 'Usage'),
    maxUsage: mem(raw.maxUsage, 'Max Usage'),
    measured: memMeasured,
  };
  const wallNs = Math.max(1, (now - prev.at) * 1e6);
  const pct = (cur: number | undefined, before: number) => (cur === undefined ? 0 : (Math.max(0, cur - before) / wallNs) * 100);
  const cpuMeasured: string[] = [];
  if (raw.cpuSystemNs !== undefined) cpuMeasured.push('System Mode');
  if (raw.cpuUserNs !== undefined) cpuMeasured.push('User Mode');
  if (raw.throttledPeriods !== undefined) cpuMeasured.push('Throttled Periods');
  if (raw.throttledTimeNs !== undefined) cpuMeasured.push('Throttled Time');
  if (raw.cpuTotalNs !== undefined) cpuMeasured.push('Percent');
  const percent = pct(raw.cpuTotalNs, prev.totalNs);
  const cpuStats = {
    systemMode: pct(raw.cpuSystemNs, prev.systemNs),
    userMode: pct(raw.cpuUserNs, prev.userNs),
    totalTicks: (percent / 100) * mhzPerCore,
    percent,
    throttledPeriods: raw.throttledPeriods ?? 0,
    throttledTime: raw.throttledTimeNs ?? 0,
    measured: cpuMeasured,
  };
  const sample: CpuSample = {
    at: now,
    totalNs: raw.cpuTotalNs ?? prev.totalNs,
    userNs: raw.cpuUserNs ?? prev.userNs,
    systemNs: raw.cpuSystemNs ?? prev.systemNs,
  };
  return { usage: { memoryStats, cpuStats }, sample };
}
