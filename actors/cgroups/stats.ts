/**
 * Task usage from its cgroup. Keeps each task's previous CPU sample (keyed by the driver
 * handle id) so CPU figures are percentages over the time since the last look; the first look
 * measures from the cgroup's birth.
 * @module
 */
import { emptyUsage, type TaskResourceUsage } from '../../model/usage.ts';
import { readText } from './fsutil.ts';
import { readProcessGroupUsage } from './proc-usage.ts';
import { toResourceUsage, type CpuSample, type RawUsage } from './raw-usage.ts';
import type { TaskCgroup } from './types.ts';
import { readUsageV1 } from './v1.ts';
import { readUsageV2 } from './v2.ts';

let mhz: number | undefined;

/** One core's clock in MHz (from /proc/cpuinfo; 1000 when it does not say). */
export function mhzPerCore(): number {
  if (mhz === undefined) {
    const m = /^cpu MHz\s*:\s*([\d.]+)/m.exec(readText('/proc/cpuinfo') ?? '');
    mhz = m ? Math.round(Number(m[1])) : 1000;
  }
  return mhz;
}

/** Reads usage of task cgroups, remembering each task's previous CPU sample. */
export class CgroupStatsReader {
  readonly #prev = new Map<string, CpuSample>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Usage of the task with handle id `key` in cgroup `cg`. */
  read(key: string, cg: TaskCgroup): TaskResourceUsage {
    return this.#convert(key, cg.version === 'v2' ? readUsageV2(cg) : readUsageV1(cg), cg.createdAt);
  }

  /** Usage of a task without a cgroup: its process group's, from /proc; `startedAt` in ms. */
  readProcessGroup(key: string, pgid: number, startedAt: number): TaskResourceUsage {
    return this.#convert(key, readProcessGroupUsage(pgid), startedAt);
  }

  #convert(key: string, raw: RawUsage, since: number): TaskResourceUsage {
    const now = this.#now();
    const prev = this.#prev.get(key) ?? { at: since, totalNs: 0, userNs: 0, systemNs: 0 };
    const { usage, sample } = toResourceUsage(raw, prev, now, mhzPerCore());
    this.#prev.set(key, sample);
    return { resourceUsage: usage, timestamp: now };
  }

  /** Forgets a task (its handle was destroyed). */
  forget(key: string): void {
    this.#prev.delete(key);
  }
}

/** Usage for a task berth cannot measure: zeros, nothing measured. */
export function unmeasured(now: number): TaskResourceUsage {
  return { resourceUsage: emptyUsage(), timestamp: now };
}
