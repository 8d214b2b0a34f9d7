/**
 * The garbage collector's client options, with Nomad's defaults, checked once at `createClient`.
 * @module
 */
import { defaultGcThresholds, type GcThresholds } from '../../machines/policy/gc.ts';
import { InvalidClientOptionError } from '../../model/errors.ts';
import { statfsUsage, type FsUsageReader } from './fs-usage.ts';

/** The `gc*` fields of `ClientOptions`. */
export interface GcClientOptions {
  /**
   * Period of the garbage collector's threshold check (default 60000, Nomad's `gc_interval`); a
   * check also runs whenever an alloc comes to rest terminal. 0 turns both off (`gc()` still works).
   */
  gcIntervalMs?: number;
  /** Percent of the alloc dir's filesystem in use above which terminal allocs are collected (default 80). */
  gcDiskUsageThreshold?: number;
  /** Percent of that filesystem's inodes in use above which terminal allocs are collected (default 70). */
  gcInodeUsageThreshold?: number;
  /**
   * Allocations on the client, terminal ones included, above which terminal ones are collected,
   * oldest-terminal first (default 50); every alloc not destroyed yet counts. `Infinity` turns
   * the count limit off.
   */
  gcMaxAllocs?: number;
  /** How many allocations the collector destroys at once (default 2). */
  gcParallelDestroys?: number;
  /** Reads the alloc dir filesystem's usage (default: statfs). Tests drive thresholds with it. */
  gcUsageReader?: FsUsageReader;
}

/** The collector's settings after defaults. */
export interface GcSettings {
  intervalMs: number;
  thresholds: GcThresholds;
  parallelDestroys: number;
  readUsage: FsUsageReader;
}

/** Nomad's defaults: every minute, 80 % disk, 70 % inodes, 50 allocs, 2 destroys at a time. */
export const GC_DEFAULT_INTERVAL_MS = 60_000;
/** Default bound on parallel destroys. */
export const GC_DEFAULT_PARALLEL_DESTROYS = 2;

function check(name: string, v: number | undefined, def: number, ok: (n: number) => boolean, rule: string): number {
  if (v === undefined) return def;
  if (typeof v !== 'number' || Number.isNaN(v) || !ok(v)) throw new InvalidClientOptionError(name, `must be ${rule} (got ${String(v)})`);
  return v;
}

/**
 * Applies defaults and checks ranges.
 * @throws InvalidClientOptionError for a negative interval, a percentage outside 0-100, or a
 *   count below 1 (`gcMaxAllocs` may be `Infinity`)
 */
export function resolveGcOptions(o: GcClientOptions): GcSettings {
  const percent = (n: number) => n >= 0 && n <= 100;
  return {
    intervalMs: check('gcIntervalMs', o.gcIntervalMs, GC_DEFAULT_INTERVAL_MS, (n) => n >= 0 && Number.isFinite(n), 'a finite number of ms >= 0'),
    thresholds: {
      diskUsageThreshold: check(
        'gcDiskUsageThreshold',
        o.gcDiskUsageThreshold,
        defaultGcThresholds.diskUsageThreshold,
        percent,
        'a percentage between 0 and 100',
      ),
      inodeUsageThreshold: check(
        'gcInodeUsageThreshold',
        o.gcInodeUsageThreshold,
        defaultGcThresholds.inodeUsageThreshold,
        percent,
        'a percentage between 0 and 100',
      ),
      maxAllocs: check(
        'gcMaxAllocs',
        o.gcMaxAllocs,
        defaultGcThresholds.maxAllocs,
        (n) => n >= 0 && (Number.isInteger(n) || n === Infinity),
        'a whole number >= 0 or Infinity',
      ),
    },
    parallelDestroys: check(
      'gcParallelDestroys',
      o.gcParallelDestroys,
      GC_DEFAULT_PARALLEL_DESTROYS,
      (n) => n >= 1 && Number.isInteger(n),
      'a whole number >= 1',
    ),
    readUsage: o.gcUsageReader ?? statfsUsage,
  };
}
