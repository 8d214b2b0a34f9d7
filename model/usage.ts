/**
 * Resource usage as Nomad reports it (`/v1/client/allocation/:id/stats`), in berth's camelCase:
 * a task's memory and CPU figures plus `measured` lists naming the fields the source could fill
 * (a field left out of `measured` is 0 because it is unknown, not because it is zero).
 * @module
 */

/** Memory use of a task (bytes). */
export interface MemoryStats {
  rss: number;
  cache: number;
  swap: number;
  usage: number;
  maxUsage: number;
  /** Nomad's names of the fields filled: "RSS", "Cache", "Swap", "Usage", "Max Usage". */
  measured: string[];
}

/** CPU use of a task over the last sampling interval. */
export interface CpuStats {
  /** Percent of one core spent in the kernel. */
  systemMode: number;
  /** Percent of one core spent in user space. */
  userMode: number;
  /** MHz consumed: `percent / 100` of one core's clock. */
  totalTicks: number;
  /** Percent of one core (200 = two cores busy). */
  percent: number;
  throttledPeriods: number;
  /** Nanoseconds. */
  throttledTime: number;
  /** Nomad's names of the fields filled: "System Mode", "User Mode", "Percent", "Throttled Periods", "Throttled Time". */
  measured: string[];
}

/** One task's (or one alloc's summed) usage. */
export interface ResourceUsage {
  memoryStats: MemoryStats;
  cpuStats: CpuStats;
}

/** A task's usage at a point in time (ms since the epoch). */
export interface TaskResourceUsage {
  resourceUsage: ResourceUsage;
  timestamp: number;
}

/** What `AllocRunner.stats()` returns: the alloc's sum and each task's own figures. */
export interface AllocResourceUsage {
  resourceUsage: ResourceUsage;
  tasks: Record<string, TaskResourceUsage>;
  timestamp: number;
}

/** All-zero usage with nothing measured. */
export function emptyUsage(): ResourceUsage {
  return {
    memoryStats: { rss: 0, cache: 0, swap: 0, usage: 0, maxUsage: 0, measured: [] },
    cpuStats: { systemMode: 0, userMode: 0, totalTicks: 0, percent: 0, throttledPeriods: 0, throttledTime: 0, measured: [] },
  };
}

/** `L` when it names every figure of `T` (all but `measured`), else `never`: a figure added to a struct and not to its list does not compile. */
type EveryFigure<T, L extends ReadonlyArray<keyof T>> = Exclude<keyof T, 'measured'> extends L[number] ? L : never;

/** The figures of each stats struct, in its order (`measured` follows them). */
const MEMORY_FIGURES = ['rss', 'cache', 'swap', 'usage', 'maxUsage'] as const;
const CPU_FIGURES = ['systemMode', 'userMode', 'totalTicks', 'percent', 'throttledPeriods', 'throttledTime'] as const;

/** `a` and `b` summed figure by figure; `measured` is the union. */
function addFigures<T extends { measured: string[] }, L extends ReadonlyArray<keyof T>>(a: T, b: T, figures: L & EveryFigure<T, L>): T {
  const out: Record<string, unknown> = {};
  for (const f of figures) out[f as string] = (a[f] as number) + (b[f] as number);
  out.measured = [...new Set([...a.measured, ...b.measured])];
  return out as T;
}

/** Sums two usages field by field (as Nomad's `ResourceUsage.Add`); `measured` is the union. */
export function addUsage(a: ResourceUsage, b: ResourceUsage): ResourceUsage {
  return { memoryStats: addFigures(a.memoryStats, b.memoryStats, MEMORY_FIGURES), cpuStats: addFigures(a.cpuStats, b.cpuStats, CPU_FIGURES) };
}
