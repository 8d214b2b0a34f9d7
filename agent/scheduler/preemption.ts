/**
 * Which allocs to evict so that a placement fits, decided as Nomad's preemptor decides it
 * (docs/scheduler.md, "How preemption chooses"):
 *
 * 1. Candidates are allocs of other jobs whose priority is at least 10 below the placing job's.
 * 2. Priorities are taken lowest first; within a priority the alloc nearest to what is still
 *    missing (Nomad's distance over cpu, memory and disk) is taken, one at a time, until the freed
 *    resources cover the ask. An alloc of a group that already has `migrate.max_parallel` or more
 *    allocs preempted by this plan is penalised, so evictions spread over jobs.
 * 3. The chosen set is then trimmed: sorted by distance from the ask, farthest first, and cut
 *    where it first covers the ask (Nomad's `filterSuperset`), so no alloc is evicted that the
 *    others already make room for.
 * @module
 */
import type { Allocation } from '../../index.ts';
import { addComparable, allocComparable, exhaustedDimension, resourceDistance, subtractComparable, type Comparable } from './resources.ts';

/** Nomad only preempts allocs of jobs at least this much lower in priority. */
export const PREEMPTION_PRIORITY_DELTA = 10;
/** Score added per alloc beyond a group's `migrate.max_parallel` already preempted. */
export const MAX_PARALLEL_PENALTY = 50;
/** Nomad's default job priority. */
export const DEFAULT_JOB_PRIORITY = 50;

/** What the preemptor needs to know. */
export interface PreemptionInput {
  /** The placing job. */
  jobId: string;
  namespace: string;
  jobPriority: number;
  /** The placement's ask (its chosen cores are already free; only cpu, memory and disk count). */
  ask: Comparable;
  /** The node's free resources with every proposed alloc counted. */
  remaining: Comparable;
  /** Every alloc the node would run (existing, not stopped, plus this plan's placements). */
  proposed: Allocation[];
  /** Allocs this plan has already preempted (for the `max_parallel` penalty). */
  preemptedSoFar: Allocation[];
}

/** The allocs to evict, smallest sufficient set in Nomad's sense; undefined when no set is enough. */
export function selectPreemptions(input: PreemptionInput): Allocation[] | undefined {
  const ask: Comparable = { ...input.ask, cores: [] };
  const covered = (have: Comparable) => exhaustedDimension(have, ask) === undefined;
  const resources = new Map<string, Comparable>();
  const keys = new Map<string, string>();
  const maxParallel = new Map<string, number>();
  const byPriority = new Map<number, Allocation[]>();
  for (const alloc of input.proposed) {
    if (alloc.jobId === input.jobId && (alloc.namespace ?? 'default') === input.namespace) continue;
    const priority = alloc.job.priority ?? DEFAULT_JOB_PRIORITY;
    if (input.jobPriority - priority < PREEMPTION_PRIORITY_DELTA) continue;
    resources.set(alloc.id, allocComparable(alloc));
    keys.set(alloc.id, groupKey(alloc));
    maxParallel.set(alloc.id, maxParallelOf(alloc));
    const group = byPriority.get(priority) ?? [];
    group.push(alloc);
    byPriority.set(priority, group);
  }
  const preemptedPerGroup = new Map<string, number>();
  for (const a of input.preemptedSoFar) {
    const key = groupKey(a);
    preemptedPerGroup.set(key, (preemptedPerGroup.get(key) ?? 0) + 1);
  }

  let available = input.remaining;
  let needed = ask;
  let met = false;
  const best: Allocation[] = [];
  for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
    const group = byPriority.get(priority)!;
    while (group.length > 0 && !met) {
      let closest = -1;
      let bestScore = Number.MAX_VALUE;
      group.forEach((alloc, i) => {
        const score = preemptionScore(needed, resources.get(alloc.id)!, maxParallel.get(alloc.id)!, preemptedPerGroup.get(keys.get(alloc.id)!) ?? 0);
        if (score < bestScore) {
          bestScore = score;
          closest = i;
        }
      });
      const chosen = group[closest];
      const freed = resources.get(chosen.id)!;
      available = addComparable(available, freed);
      met = covered(available);
      best.push(chosen);
      // Nomad removes the chosen alloc by moving the last one into its place; ties later depend on it.
      group[closest] = group[group.length - 1];
      group.pop();
      needed = subtractComparable(needed, freed);
    }
    if (met) break;
  }
  if (!met) return undefined;

  // Trim: farthest from the ask first, stop as soon as the ask is covered.
  const ordered = best.map((alloc, i) => ({ alloc, i, d: resourceDistance(ask, resources.get(alloc.id)!) })).sort((x, y) => y.d - x.d || x.i - y.i);
  let free = input.remaining;
  const chosen: Allocation[] = [];
  for (const { alloc } of ordered) {
    chosen.push(alloc);
    free = addComparable(free, resources.get(alloc.id)!);
    if (covered(free)) break;
  }
  return chosen;
}

/**
 * Nomad's `scoreForTaskGroup`: distance from what is missing, plus a penalty of 50 for each alloc
 * of the same group at or beyond its `migrate.max_parallel` already preempted. Lower is better.
 */
export function preemptionScore(needed: Comparable, used: Comparable, maxParallel: number, alreadyPreempted: number): number {
  const penalty = maxParallel > 0 && alreadyPreempted >= maxParallel ? (alreadyPreempted + 1 - maxParallel) * MAX_PARALLEL_PENALTY : 0;
  return resourceDistance(needed, used) + penalty;
}

function maxParallelOf(alloc: Allocation): number {
  return alloc.job.taskGroups.find((g) => g.name === alloc.taskGroup)?.migrate?.maxParallel ?? 0;
}

function groupKey(alloc: Allocation): string {
  return `${alloc.namespace ?? 'default'}\u0000${alloc.jobId}\u0000${alloc.taskGroup}`;
}
