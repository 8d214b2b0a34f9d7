/**
 * The allocation table `nomad job status` and `nomad job allocs` print.
 * @module
 */
import { nanoTime, short, table } from '../nomad/table.ts';

/** ID, node, group, version, desired and client status, created and modified; newest first. */
export function allocTable(allocs: Array<Record<string, unknown>>): string {
  const newest = [...allocs].sort((a, b) => Number(b.CreateIndex ?? 0) - Number(a.CreateIndex ?? 0));
  return table(
    ['ID', 'Node ID', 'Task Group', 'Version', 'Desired', 'Status', 'Created', 'Modified'],
    newest.map((a) => [
      short(a.ID),
      short(a.NodeID),
      a.TaskGroup,
      a.JobVersion,
      a.DesiredStatus,
      a.ClientStatus,
      nanoTime(a.CreateTime),
      nanoTime(a.ModifyTime),
    ]),
  );
}
