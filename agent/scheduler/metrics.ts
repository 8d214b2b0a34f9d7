/**
 * Nomad's `AllocMetric` for one node, built the way its scheduler fills it: a node evaluated,
 * then filtered (by a reason), exhausted (in a dimension), or scored for the placement. Pure.
 * @module
 */
import type { TaskGroup } from '../../index.ts';
import { DEFAULT_TASK_CPU_MHZ, DEFAULT_TASK_MEMORY_MB } from './resources.ts';
import type { AllocMetric, SchedulerNode } from './types.ts';

/** The metric of a placement that evaluated the node (ready in its datacenter). */
export function evaluatedMetric(node: SchedulerNode): AllocMetric {
  return {
    nodesEvaluated: 1,
    nodesFiltered: 0,
    nodesAvailable: { [node.datacenter ?? 'dc1']: 1 },
    nodesExhausted: 0,
    dimensionExhausted: {},
    coalescedFailures: 0,
  };
}

/** The node was filtered out (Nomad's `FilterNode`): by class, and by reason. */
export function filteredMetric(node: SchedulerNode, reason: string): AllocMetric {
  const m = evaluatedMetric(node);
  m.nodesFiltered = 1;
  if (node.nodeClass) m.classFiltered = { [node.nodeClass]: 1 };
  m.constraintFiltered = { [reason]: 1 };
  return m;
}

/**
 * The node had no room (Nomad's `ExhaustedNode` and `ExhaustResources`): the dimension, the
 * class, and per task what it asked of the exhausted cpu and memory.
 */
export function exhaustedMetric(node: SchedulerNode, dimension: string, group: TaskGroup): AllocMetric {
  const m = evaluatedMetric(node);
  m.nodesExhausted = 1;
  m.dimensionExhausted = { [dimension]: 1 };
  if (node.nodeClass) m.classExhausted = { [node.nodeClass]: 1 };
  m.resourcesExhausted = Object.fromEntries(
    group.tasks.map((t) => [
      t.name,
      {
        cpu: dimension === 'cpu' ? (t.resources?.cpu ?? DEFAULT_TASK_CPU_MHZ) : 0,
        memoryMB: dimension === 'memory' ? (t.resources?.memoryMB ?? DEFAULT_TASK_MEMORY_MB) : 0,
      },
    ]),
  );
  return m;
}
