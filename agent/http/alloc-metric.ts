/**
 * berth's {@link AllocMetric} as Nomad's API `AllocationMetric` (an eval's `FailedTGAllocs`, a
 * plan's, and an allocation's `Metrics`): every field Nomad's struct has, nil maps as `null`,
 * `AllocationTime` in nanoseconds, `Scores` keyed `<node id>.<scorer>` as Nomad's deprecated map is.
 * @module
 */
import type { AllocMetric } from '../scheduler/index.ts';

const orNull = <T extends object>(m: T | undefined): T | null => (m && Object.keys(m).length > 0 ? m : null);

/** Nomad's `AllocationMetric` JSON. */
export function apiAllocMetric(m: AllocMetric, nodePool = 'default'): Record<string, unknown> {
  const scores = m.scoreMetaData ?? [];
  return {
    NodesEvaluated: m.nodesEvaluated,
    NodesFiltered: m.nodesFiltered,
    NodesInPool: m.nodesEvaluated,
    NodePool: nodePool,
    NodesAvailable: m.nodesAvailable,
    ClassFiltered: orNull(m.classFiltered),
    ConstraintFiltered: orNull(m.constraintFiltered),
    NodesExhausted: m.nodesExhausted,
    ClassExhausted: orNull(m.classExhausted),
    DimensionExhausted: orNull(m.dimensionExhausted),
    QuotaExhausted: null,
    ResourcesExhausted: m.resourcesExhausted
      ? Object.fromEntries(
          Object.entries(m.resourcesExhausted).map(([t, r]) => [
            t,
            { CPU: r.cpu, Cores: 0, MemoryMB: r.memoryMB, MemoryMaxMB: 0, DiskMB: 0, Networks: null, Devices: null, NUMA: null, SecretsMB: 0, IOPS: 0 },
          ]),
        )
      : null,
    Scores: scores.length ? Object.fromEntries(scores.flatMap((s) => Object.entries(s.scores).map(([k, v]) => [`${s.nodeId}.${k}`, v]))) : null,
    AllocationTime: Math.round((m.allocationTimeMs ?? 0) * 1e6),
    CoalescedFailures: m.coalescedFailures,
    ScoreMetaData: scores.length ? scores.map((s) => ({ NodeID: s.nodeId, Scores: s.scores, NormScore: s.normScore })) : null,
  };
}
