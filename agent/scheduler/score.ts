/**
 * The scores Nomad's rank iterators give a node for one placement, for the placed alloc's
 * `Metrics.ScoreMetaData` (what `nomad alloc status -verbose` prints). On one node they choose
 * nothing (there is no other node), so they never block; they are reported as Nomad computes
 * them: `binpack` (Nomad's ScoreFitBinPack over 18), `job-anti-affinity`,
 * `node-reschedule-penalty`, `node-affinity`, `allocation-spread`, and their mean
 * (`normalized-score`). Pure.
 * @module
 */
import type { Affinity, Allocation, Job, TaskGroup } from '../../index.ts';
import { checkConstraint, resolveTarget } from './feasible.ts';
import { addComparable, allocComparable, emptyComparable, nodeAvailable, type Comparable } from './resources.ts';
import type { SchedulerNode } from './types.ts';

/** What {@link scorePlacement} needs. */
export interface ScoreInput {
  node: SchedulerNode;
  job: Job;
  group: TaskGroup;
  /** What the node would run before this alloc. */
  proposed: Allocation[];
  /** This alloc's ask. */
  ask: Comparable;
  /** A reschedule: the failed alloc's node is penalised (on one node, always this one). */
  reschedule: boolean;
}

/** Nomad's binpack fitness: 20 - (10^freeCpu + 10^freeMem), bounded to [0, 18], over 18. */
export function binpackScore(available: Comparable, used: Comparable): number {
  const free = (u: number, a: number) => (a > 0 ? 1 - u / a : 0);
  const score = 20 - (10 ** free(used.cpu, available.cpu) + 10 ** free(used.memoryMB, available.memoryMB));
  return Math.min(18, Math.max(0, score)) / 18;
}

/** The node's scores for one placement, keyed as Nomad's scorers are, plus the mean of those that count. */
export function scorePlacement(input: ScoreInput): { scores: Record<string, number>; normScore: number } {
  const { node, job, group, proposed } = input;
  const scores: Record<string, number> = {};
  const counted: number[] = [];
  const used = proposed.reduce((sum, a) => addComparable(sum, allocComparable(a)), emptyComparable());
  scores.binpack = binpackScore(nodeAvailable(node), addComparable(used, input.ask));
  counted.push(scores.binpack);

  // Allocs of the same job and group already on the node push the placement away.
  const collisions = proposed.filter((a) => a.jobId === job.id && a.taskGroup === group.name).length;
  scores['job-anti-affinity'] = collisions > 0 ? -(collisions + 1) / Math.max(1, group.count ?? 1) : 0;
  if (collisions > 0) counted.push(scores['job-anti-affinity']);

  scores['node-reschedule-penalty'] = input.reschedule ? -1 : 0;
  if (input.reschedule) counted.push(-1);

  const affinities: Affinity[] = [...(job.affinities ?? []), ...(group.affinities ?? []), ...group.tasks.flatMap((t) => t.affinities ?? [])];
  if (affinities.length === 0) scores['node-affinity'] = 0;
  else {
    const sum = affinities.reduce((s, a) => s + Math.abs(a.weight ?? 50), 0);
    const total = affinities.reduce(
      (s, a) => s + (checkConstraint(a.operand, resolveTarget(a.lTarget ?? '', node), resolveTarget(a.rTarget ?? '', node)) ? (a.weight ?? 50) : 0),
      0,
    );
    scores['node-affinity'] = sum > 0 ? total / sum : 0;
    if (total !== 0) counted.push(scores['node-affinity']);
  }

  const spread = spreadScore(input, collisions);
  if (spread !== undefined) {
    scores['allocation-spread'] = spread;
    if (spread !== 0) counted.push(spread);
  }
  return { scores, normScore: counted.reduce((a, b) => a + b, 0) / counted.length };
}

/**
 * Nomad's spread boost for the node's value of each spread attribute: with targets, (desired -
 * used) / desired for the node's target (its percent of the group's count), -1 when the node's
 * value is in no target; an even spread over one node's single value is 0. Weighted by each
 * spread's weight over their sum.
 */
function spreadScore({ node, job, group }: ScoreInput, used: number): number | undefined {
  const spreads = [...(job.spreads ?? []), ...(group.spreads ?? [])];
  if (spreads.length === 0) return undefined;
  const sumWeights = spreads.reduce((s, x) => s + (x.weight ?? 50), 0);
  if (sumWeights === 0) return 0;
  let total = 0;
  for (const s of spreads) {
    const weight = (s.weight ?? 50) / sumWeights;
    if (!s.spreadTarget?.length) continue;
    const [value, found] = resolveTarget(s.attribute, node);
    const target = found ? s.spreadTarget.find((t) => t.value === value) : undefined;
    const explicit = s.spreadTarget.reduce((sum, t) => sum + (t.percent ?? 0), 0);
    const percent = target ? (target.percent ?? 0) : s.spreadTarget.some((t) => t.value === '*') ? 0 : Math.max(0, 100 - explicit);
    const desired = (percent / 100) * (group.count ?? 1);
    total += desired > 0 ? ((desired - used) / desired) * weight : -weight;
  }
  return total;
}
