/**
 * One-line renderings of task usage, for command lines and logs (`berth run --stats 5s`).
 * @module
 */
import type { ResourceUsage } from '../../model/usage.ts';

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

/**
 * A task's usage on one line; fields its hierarchy could not measure show as `-`.
 * @example
 * formatUsageLine('web', usage)
 * // "web: cpu 12.5% (325 MHz, user 11.0%, sys 1.5%), mem rss 45.2 MiB, usage 48.0 MiB, max 50.1 MiB"
 */
export function formatUsageLine(task: string, u: ResourceUsage): string {
  const c = u.cpuStats;
  const m = u.memoryStats;
  const has = (list: string[], name: string) => list.includes(name);
  const cpu = has(c.measured, 'Percent')
    ? `cpu ${c.percent.toFixed(1)}% (${Math.round(c.totalTicks)} MHz, user ${c.userMode.toFixed(1)}%, sys ${c.systemMode.toFixed(1)}%)`
    : 'cpu -';
  const throttled =
    has(c.measured, 'Throttled Periods') && c.throttledPeriods > 0 ? `, throttled ${c.throttledPeriods}x ${(c.throttledTime / 1e6).toFixed(0)} ms` : '';
  const mem = (name: string, label: string, v: number) => (has(m.measured, name) ? `${label} ${mib(v)}` : `${label} -`);
  return `${task}: ${cpu}${throttled}, mem ${mem('RSS', 'rss', m.rss)}, ${mem('Usage', 'usage', m.usage)}, ${mem('Max Usage', 'max', m.maxUsage)}`;
}
