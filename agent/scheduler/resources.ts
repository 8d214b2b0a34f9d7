/**
 * Resource arithmetic: what a node has, what an alloc holds, what a group asks for, and whether
 * one covers the other (Nomad's `ComparableResources` and `AllocsFit`).
 * @module
 */
import { MEMORY_NO_LIMIT, type AllocatedResources, type Allocation, type TaskGroup } from '../../index.ts';
import type { SchedulerNode } from './types.ts';

/** Nomad's canonical task resources when a task names none. */
export const DEFAULT_TASK_CPU_MHZ = 100;
/** Nomad's canonical task memory in MB. */
export const DEFAULT_TASK_MEMORY_MB = 300;
/** Nomad's canonical ephemeral disk in MB. */
export const DEFAULT_EPHEMERAL_DISK_MB = 300;

/** Resources flattened for comparison (Nomad's `ComparableResources`, without networks). */
export interface Comparable {
  cpu: number;
  memoryMB: number;
  diskMB: number;
  /** Core ids. */
  cores: number[];
}

/** Nothing. */
export function emptyComparable(): Comparable {
  return { cpu: 0, memoryMB: 0, diskMB: 0, cores: [] };
}

/** `a + b` (cores united). */
export function addComparable(a: Comparable, b: Comparable): Comparable {
  return { cpu: a.cpu + b.cpu, memoryMB: a.memoryMB + b.memoryMB, diskMB: a.diskMB + b.diskMB, cores: [...a.cores, ...b.cores] };
}

/** `a - b` (cores removed). */
export function subtractComparable(a: Comparable, b: Comparable): Comparable {
  const gone = new Set(b.cores);
  return {
    cpu: a.cpu - b.cpu,
    memoryMB: a.memoryMB - b.memoryMB,
    diskMB: a.diskMB - b.diskMB,
    cores: a.cores.filter((c) => !gone.has(c)),
  };
}

/**
 * Nomad's `Superset`: does `have` cover `need`? Returns the first dimension that does not, in
 * Nomad's order (cpu, cores, memory, disk), or undefined when it does.
 */
export function exhaustedDimension(have: Comparable, need: Comparable): string | undefined {
  if (have.cpu < need.cpu) return 'cpu';
  const cores = new Set(have.cores);
  if (need.cores.some((c) => !cores.has(c))) return 'cores';
  if (have.memoryMB < need.memoryMB) return 'memory';
  if (have.diskMB < need.diskMB) return 'disk';
  return undefined;
}

/** The node's resources minus its `reserved` block. */
export function nodeAvailable(node: SchedulerNode): Comparable {
  const r = node.reserved ?? {};
  const reservedCores = new Set(r.cores ?? []);
  const cores: number[] = [];
  for (let id = 0; id < (node.resources.cores ?? 1); id++) if (!reservedCores.has(id)) cores.push(id);
  return {
    cpu: node.resources.cpuMHz - (r.cpuMHz ?? 0),
    memoryMB: node.resources.memoryMB - (r.memoryMB ?? 0),
    diskMB: node.resources.diskMB - (r.diskMB ?? 0),
    cores,
  };
}

/** Allocs are not mutated once handed in: their flattened resources are worked out once. */
const comparableCache = new WeakMap<Allocation, Comparable>();

/** What an alloc holds: its `allocatedResources`, or (an alloc made by hand) what its group asks for. */
export function allocComparable(alloc: Allocation): Comparable {
  let c = comparableCache.get(alloc);
  if (!c) {
    c = comparableOf(alloc.allocatedResources ?? groupAsk(groupOf(alloc), false));
    comparableCache.set(alloc, c);
  }
  return c;
}

/** Flatten allocated resources. */
export function comparableOf(res: AllocatedResources): Comparable {
  const out = emptyComparable();
  for (const t of Object.values(res.tasks)) {
    out.cpu += t.cpu;
    out.memoryMB += t.memoryMB;
    out.cores.push(...(t.cores ?? []));
  }
  out.diskMB = res.shared.diskMB;
  return out;
}

/**
 * What a group asks for, before cores and ports are chosen: per task cpu and memory (plus its
 * secrets tmpfs, which Nomad counts as memory), the group's ephemeral disk. A task asking for
 * whole cores gets its cpu from the cores the scheduler picks.
 */
export function groupAsk(group: TaskGroup, memoryOversubscription: boolean): AllocatedResources {
  const tasks: AllocatedResources['tasks'] = {};
  for (const task of group.tasks) {
    const r = task.resources ?? {};
    const memoryMB = (r.memoryMB ?? DEFAULT_TASK_MEMORY_MB) + (r.secretsMB ?? 0);
    tasks[task.name] = { cpu: r.cores ? 0 : (r.cpu ?? DEFAULT_TASK_CPU_MHZ), memoryMB };
    // As Nomad's ranker: a size grows by the secrets tmpfs; -1 (no hard limit) stays -1.
    if (memoryOversubscription && r.memoryMaxMB)
      tasks[task.name].memoryMaxMB = r.memoryMaxMB === MEMORY_NO_LIMIT ? MEMORY_NO_LIMIT : r.memoryMaxMB + (r.secretsMB ?? 0);
  }
  return { tasks, shared: { diskMB: group.ephemeralDisk?.sizeMB ?? DEFAULT_EPHEMERAL_DISK_MB, ports: [] } };
}

/** The alloc's group in the job it carries. */
export function groupOf(alloc: Allocation): TaskGroup {
  const group = alloc.job.taskGroups.find((g) => g.name === alloc.taskGroup);
  return group ?? { name: alloc.taskGroup, tasks: [] };
}

/**
 * Nomad's `basicResourceDistance`: how far `used` is from `ask`, each of memory, cpu and disk as a
 * fraction of the ask, combined as a Euclidean norm. Lower is a closer fit.
 */
export function resourceDistance(ask: Comparable, used: Comparable): number {
  const coord = (a: number, u: number) => (a > 0 ? (a - u) / a : 0);
  return Math.hypot(coord(ask.memoryMB, used.memoryMB), coord(ask.cpu, used.cpu), coord(ask.diskMB, used.diskMB));
}
