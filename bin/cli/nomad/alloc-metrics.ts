/**
 * Nomad's `formatAllocMetrics` text for an `AllocationMetric` (a failed placement's reasons, as
 * `nomad job run`, `job status`, `eval status` and `job plan` print them): no node evaluated, an
 * empty datacenter, nodes filtered by class and by constraint (`Constraint "${attr.kernel.name}
 * = windows": 1 nodes excluded by filter`, `missing drivers` among them), nodes exhausted, by
 * class and by dimension.
 * @module
 */
import { formatFloat } from '../../../actors/templates/fmt.ts';
import { table } from './table.ts';

type Obj = Record<string, unknown>;

const entries = (m: unknown): Array<[string, number]> => Object.entries((m as Record<string, number> | null | undefined) ?? {});

/** The metric's lines, each starting with `prefix`. */
export function allocMetricLines(m: Obj, prefix = '  '): string[] {
  const out: string[] = [];
  if (Number(m.NodesEvaluated ?? 0) === 0) out.push(`${prefix}* No nodes were eligible for evaluation`);
  for (const [dc, n] of entries(m.NodesAvailable)) if (n === 0) out.push(`${prefix}* No nodes are available in datacenter ${JSON.stringify(dc)}`);
  for (const [cls, n] of entries(m.ClassFiltered)) out.push(`${prefix}* Class ${JSON.stringify(cls)}: ${n} nodes excluded by filter`);
  for (const [c, n] of entries(m.ConstraintFiltered)) out.push(`${prefix}* Constraint ${JSON.stringify(c)}: ${n} nodes excluded by filter`);
  if (Number(m.NodesExhausted ?? 0) > 0) out.push(`${prefix}* Resources exhausted on ${m.NodesExhausted} nodes`);
  for (const [cls, n] of entries(m.ClassExhausted)) out.push(`${prefix}* Class ${JSON.stringify(cls)} exhausted on ${n} nodes`);
  for (const [d, n] of entries(m.DimensionExhausted)) out.push(`${prefix}* Dimension ${JSON.stringify(d)} exhausted on ${n} nodes`);
  return out;
}

/** `Task Group "web" (failed to place 2 allocations):`, as Nomad words it. */
export function failedGroupHeader(group: string, m: Obj): string {
  const n = Number(m.CoalescedFailures ?? 0) + 1;
  return `Task Group ${JSON.stringify(group)} (failed to place ${n} allocation${n > 1 ? 's' : ''}):`;
}

/**
 * The placement scores of a metric as nomad's `formatAllocMetrics` prints them with scores: a
 * `Node | <scorer>... | final score` table, scorers sorted by name, each value as Go's `%.3g`.
 * Empty when the metric has no score metadata.
 */
export function scoreTable(m: Obj): string {
  const meta = (m.ScoreMetaData as Array<{ NodeID: string; Scores: Record<string, number>; NormScore: number }> | null | undefined) ?? [];
  if (!meta.length) return '';
  const scorers = [...new Set(meta.flatMap((x) => Object.keys(x.Scores ?? {})))].sort();
  return table(
    ['Node', ...scorers, 'final score'],
    meta.map((x) => [x.NodeID, ...scorers.map((s) => formatFloat(x.Scores?.[s] ?? 0, 'g', 3)), formatFloat(x.NormScore ?? 0, 'g', 3)]),
  );
}
