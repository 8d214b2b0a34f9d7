/**
 * The agent's seam to the scheduler: (job, node, allocations, preemption settings) → a plan of
 * placements, stops and evictions. Pure: no I/O, no clock, no randomness but the ids it is
 * handed. berth's one-node scheduler plugs in here; until it does, this small placer covers
 * what the agent's specs and the #10200 repro need:
 *
 * - each group gets `count` live allocs named `<job>.<group>[i]`, the lowest free indexes first;
 *   extra ones (highest index first) are stopped;
 * - a new job version replaces allocs whose group changed (the new alloc names the old one as
 *   `previousAllocation`); a group that changed only its count keeps its allocs;
 * - an alloc fits when the node's CPU, memory and disk, less the reserved part and what every
 *   live alloc holds, cover its tasks' resources; allocs the plan stops free theirs at once;
 * - when it does not fit and preemption is on for the job's type, the lowest-priority live allocs
 *   at least 10 priorities below the job are evicted, fewest first, until it fits (Nomad's rule
 *   of thumb); each victim's `desiredDescription` names the alloc that preempted it.
 * @module
 */
import type { Allocation, Job, TaskGroup } from '../../index.ts';
import type { PreemptionConfig } from '../config/config.ts';

/** What the node offers (already less its reserved part). */
export interface NodeCapacity {
  id: string;
  name: string;
  cpuMHz: number;
  memoryMB: number;
  diskMB: number;
}

/** Everything one scheduling pass looks at. */
export interface PlacementInput {
  evalId: string;
  jobId: string;
  /** The job's current version, or undefined once it is stopped or gone. */
  job: Job | undefined;
  /** The current version's number. */
  jobVersion: number;
  node: NodeCapacity;
  /** Every allocation the servers know on this node (any job, any status), with its job version. */
  allocs: Array<{ alloc: Allocation; jobVersion: number }>;
  preemption: PreemptionConfig;
  /** Fresh alloc ids, in order. */
  newId: () => string;
  now: number;
}

/** One stop or eviction. */
export interface PlannedStop {
  allocId: string;
  desiredStatus: 'stop' | 'evict';
  description: string;
  /** For an eviction: the alloc that preempted it. */
  preemptedBy?: string;
}

/** What the pass decided. */
export interface PlacementPlan {
  place: Array<{ alloc: Allocation; jobVersion: number }>;
  stop: PlannedStop[];
  /** Allocs kept, given the new job version in place. */
  inPlace: Array<{ alloc: Allocation; jobVersion: number }>;
  /** Per group: how many could not be placed, and the dimension that ran out. */
  failed: Record<string, { count: number; dimension: string }>;
}

type Need = { cpu: number; memoryMB: number; diskMB: number };

/** CPU, memory and disk a group asks for (Nomad's defaults for missing task resources). */
export function groupNeed(group: TaskGroup): Need {
  let cpu = 0;
  let memoryMB = 0;
  for (const t of group.tasks) {
    cpu += t.resources?.cpu ?? 100;
    memoryMB += t.resources?.memoryMB ?? 300;
  }
  return { cpu, memoryMB, diskMB: group.ephemeralDisk?.sizeMB ?? 300 };
}

const CLIENT_TERMINAL = new Set(['complete', 'failed', 'lost']);

/** An alloc that holds resources: the servers want it running and the client has not ended it. */
export function holdsResources(a: Allocation): boolean {
  return a.desiredStatus === 'run' && !CLIENT_TERMINAL.has(a.clientStatus);
}

const groupOf = (a: Allocation): TaskGroup | undefined => a.job.taskGroups.find((g) => g.name === a.taskGroup);

const indexOf = (name: string | undefined): number => {
  const m = /\[(\d+)\]$/.exec(name ?? '');
  return m ? Number(m[1]) : -1;
};

/** Group spec without its count: what decides an in-place update versus a replacement. */
const specOf = (g: TaskGroup) => JSON.stringify({ ...g, count: undefined });

function preemptionOn(cfg: PreemptionConfig, type: Job['type']): boolean {
  if (type === 'service') return cfg.serviceSchedulerEnabled;
  if (type === 'batch') return cfg.batchSchedulerEnabled;
  if (type === 'sysbatch') return cfg.sysbatchSchedulerEnabled;
  return cfg.systemSchedulerEnabled;
}

/** Plans one evaluation of `input.jobId`. */
export function planPlacement(input: PlacementInput): PlacementPlan {
  const plan: PlacementPlan = { place: [], stop: [], inPlace: [], failed: {} };
  const stopped = new Set<string>();
  const stop = (a: Allocation, s: Omit<PlannedStop, 'allocId'>) => {
    stopped.add(a.id);
    plan.stop.push({ allocId: a.id, ...s });
  };
  const versionOf = new Map(input.allocs.map((a) => [a.alloc.id, a.jobVersion]));
  const all = input.allocs.map((a) => a.alloc);
  const live = all.filter(
    (a) =>
      a.jobId === input.jobId &&
      a.desiredStatus === 'run' &&
      (a.job.type === 'batch' ? a.clientStatus !== 'failed' && a.clientStatus !== 'lost' : !CLIENT_TERMINAL.has(a.clientStatus)),
  );
  const job = input.job;
  if (!job) {
    for (const a of live) stop(a, { desiredStatus: 'stop', description: 'alloc not needed due to job update' });
    return plan;
  }
  const used: Need = { cpu: 0, memoryMB: 0, diskMB: 0 };
  const holders = all.filter(holdsResources);
  const add = (n: Need, sign: 1 | -1) => {
    used.cpu += sign * n.cpu;
    used.memoryMB += sign * n.memoryMB;
    used.diskMB += sign * n.diskMB;
  };
  for (const a of holders) {
    const g = groupOf(a);
    if (g) add(groupNeed(g), 1);
  }
  const release = (a: Allocation) => {
    const g = groupOf(a);
    if (g && holdsResources(a)) add(groupNeed(g), -1);
  };
  const shortfall = (need: Need): string | undefined => {
    if (used.cpu + need.cpu > input.node.cpuMHz) return 'cpu';
    if (used.memoryMB + need.memoryMB > input.node.memoryMB) return 'memory';
    if (used.diskMB + need.diskMB > input.node.diskMB) return 'disk';
    return undefined;
  };

  for (const a of live) {
    if (!job.taskGroups.some((g) => g.name === a.taskGroup)) {
      stop(a, { desiredStatus: 'stop', description: 'alloc not needed as task group was removed' });
      release(a);
    }
  }

  for (const group of job.taskGroups) {
    const count = group.count ?? 1;
    const mine = live.filter((a) => a.taskGroup === group.name && !stopped.has(a.id)).sort((x, y) => indexOf(x.name) - indexOf(y.name));
    // Extra allocs go first, highest index first.
    const keep = mine.slice(0, count);
    for (const a of mine.slice(count)) {
      stop(a, { desiredStatus: 'stop', description: 'alloc not needed due to job update' });
      release(a);
    }
    const replacements: Array<{ name: string; previous?: Allocation }> = [];
    for (const a of keep) {
      const old = groupOf(a);
      if ((versionOf.get(a.id) ?? 0) === input.jobVersion && old && specOf(old) === specOf(group)) continue;
      if (old && specOf(old) === specOf(group)) {
        plan.inPlace.push({ alloc: { ...a, job }, jobVersion: input.jobVersion });
        continue;
      }
      stop(a, { desiredStatus: 'stop', description: 'alloc is being updated due to job update' });
      release(a);
      replacements.push({ name: a.name ?? `${job.id}.${group.name}[${indexOf(a.name)}]`, previous: a });
    }
    const taken = new Set(keep.map((a) => indexOf(a.name)));
    let next = 0;
    for (let i = keep.length; i < count; i++) {
      while (taken.has(next)) next++;
      taken.add(next);
      replacements.push({ name: `${job.id}.${group.name}[${next}]` });
    }
    const need = groupNeed(group);
    let unplaced = 0;
    let dimension = '';
    for (const r of replacements) {
      const id = input.newId();
      let short = shortfall(need);
      const victims: Allocation[] = [];
      if (short && preemptionOn(input.preemption, job.type)) {
        const priority = job.priority ?? 50;
        const candidates = all
          .filter((a) => holdsResources(a) && !stopped.has(a.id) && a.jobId !== job.id && (a.job.priority ?? 50) <= priority - 10)
          .sort((x, y) => (x.job.priority ?? 50) - (y.job.priority ?? 50) || (x.createTime ?? 0) - (y.createTime ?? 0));
        const trial = { ...used };
        for (const c of candidates) {
          const g = groupOf(c);
          if (!g) continue;
          const n = groupNeed(g);
          victims.push(c);
          trial.cpu -= n.cpu;
          trial.memoryMB -= n.memoryMB;
          trial.diskMB -= n.diskMB;
          if (
            trial.cpu + need.cpu <= input.node.cpuMHz &&
            trial.memoryMB + need.memoryMB <= input.node.memoryMB &&
            trial.diskMB + need.diskMB <= input.node.diskMB
          )
            break;
        }
        const fits =
          trial.cpu + need.cpu <= input.node.cpuMHz && trial.memoryMB + need.memoryMB <= input.node.memoryMB && trial.diskMB + need.diskMB <= input.node.diskMB;
        if (fits) {
          for (const v of victims) {
            release(v);
            stop(v, { desiredStatus: 'evict', description: `Preempted by alloc ID ${id}`, preemptedBy: id });
          }
          short = undefined;
        } else victims.length = 0;
      }
      if (short) {
        unplaced++;
        dimension = short;
        continue;
      }
      add(need, 1);
      plan.place.push({
        jobVersion: input.jobVersion,
        alloc: {
          id,
          namespace: job.namespace ?? 'default',
          name: r.name,
          nodeId: input.node.id,
          jobId: job.id,
          job,
          taskGroup: group.name,
          desiredStatus: 'run',
          clientStatus: 'pending',
          allocModifyIndex: 0,
          createTime: input.now,
          ...(r.previous ? { previousAllocation: r.previous.id } : {}),
          ...(victims.length ? { preemptedAllocations: victims.map((v) => v.id) } : {}),
        },
      });
    }
    if (unplaced) plan.failed[group.name] = { count: unplaced, dimension };
  }
  return plan;
}
