/**
 * The allocation table `nomad job status`, `nomad job allocs` and `nomad eval status` print.
 * @module
 */
import { nanoTime, prettyTimeDiff, short, table } from '../nomad/table.ts';

/** How the table is printed: `verbose` (whole ids, the eval and node name, absolute times), and the clock of relative times. */
export interface AllocTableOptions {
  verbose?: boolean;
  /** Whole ids in the short table (`nomad eval status -verbose`'s placed allocations). */
  fullIds?: boolean;
  /** Now, in ms: created and modified are printed as `5m ago` against it unless verbose. */
  now?: number;
}

/** ID, node, group, version, desired and client status, created and modified; newest first. */
export function allocTable(allocs: Array<Record<string, unknown>>, opts: AllocTableOptions = {}): string {
  const newest = [...allocs].sort((a, b) => Number(b.CreateIndex ?? 0) - Number(a.CreateIndex ?? 0));
  const now = opts.now ?? Date.now();
  if (opts.verbose)
    return table(
      ['ID', 'Eval ID', 'Node ID', 'Node Name', 'Task Group', 'Version', 'Desired', 'Status', 'Created', 'Modified'],
      newest.map((a) => [
        a.ID,
        a.EvalID,
        a.NodeID,
        a.NodeName,
        a.TaskGroup,
        a.JobVersion,
        a.DesiredStatus,
        a.ClientStatus,
        nanoTime(a.CreateTime),
        nanoTime(a.ModifyTime),
      ]),
    );
  return table(
    ['ID', 'Node ID', 'Task Group', 'Version', 'Desired', 'Status', 'Created', 'Modified'],
    newest.map((a) => [
      opts.fullIds ? a.ID : short(a.ID),
      opts.fullIds ? a.NodeID : short(a.NodeID),
      a.TaskGroup,
      a.JobVersion,
      a.DesiredStatus,
      a.ClientStatus,
      prettyTimeDiff(a.CreateTime, now),
      prettyTimeDiff(a.ModifyTime, now),
    ]),
  );
}
