/**
 * Usage of a task without a cgroup, from /proc: the processes of its process group (what berth
 * kills it by then). Fills what Nomad's basic executor measures: RSS and Swap, System Mode,
 * User Mode and Percent.
 * @module
 */
import fs from 'node:fs';
import type { RawUsage } from './raw-usage.ts';

/** USER_HZ (clock ticks of /proc/<pid>/stat) and the page size, as on every Linux berth runs on. */
const USER_HZ = 100;
const PAGE = 4096;

/** Sums the usage of every live process in process group `pgid`. */
export function readProcessGroupUsage(pgid: number): RawUsage {
  let rss = 0;
  let swap = 0;
  let user = 0;
  let system = 0;
  for (const name of fs.readdirSync('/proc')) {
    if (name.charCodeAt(0) > 57) continue; // not a pid
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[2]) !== pgid || f[0] === 'Z') continue;
      user += Number(f[11]);
      system += Number(f[12]);
      rss += Number(f[21]) * PAGE;
      const m = /^VmSwap:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${name}/status`, 'utf8'));
      if (m) swap += Number(m[1]) * 1024;
    } catch {
      // exited meanwhile
    }
  }
  const ns = (ticks: number) => (ticks * 1e9) / USER_HZ;
  return { rss, swap, cpuUserNs: ns(user), cpuSystemNs: ns(system), cpuTotalNs: ns(user + system) };
}
