/**
 * A deployment as `nomad deployment status` and the "Latest Deployment" section of
 * `nomad job status` print it: its id, status and description, then per group how many allocs
 * are desired, placed, healthy and unhealthy, and by when it must progress.
 * @module
 */
import { kv, short, table } from './table.ts';

type Obj = Record<string, unknown>;

/** The `ID = ...` block; `full` adds the job and its version, as `deployment status` does. */
export function deploymentBlock(d: Obj, full: boolean): string {
  return kv([
    ['ID', short(d.ID)],
    ...(full
      ? ([
          ['Job ID', d.JobID],
          ['Job Version', d.JobVersion],
        ] as Array<[string, unknown]>)
      : []),
    ['Status', d.Status],
    ['Description', d.StatusDescription],
  ]);
}

/**
 * The "Deployed" table: one row per task group, sorted by name; nomad adds "Auto Revert" when a
 * group reverts, and "Promoted" and "Canaries" when a group has canaries ("N/A" for one without).
 */
export function deployedTable(d: Obj): string {
  const groups = Object.entries((d.TaskGroups as Record<string, Obj> | undefined) ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  const revert = groups.some(([, t]) => t.AutoRevert === true);
  const canaries = groups.some(([, t]) => Number(t.DesiredCanaries ?? 0) > 0);
  const head = ['Task Group', ...(revert ? ['Auto Revert'] : []), ...(canaries ? ['Promoted'] : []), 'Desired', ...(canaries ? ['Canaries'] : [])];
  return table(
    [...head, 'Placed', 'Healthy', 'Unhealthy', 'Progress Deadline'],
    groups.map(([g, t]) => [
      g,
      ...(revert ? [t.AutoRevert === true] : []),
      ...(canaries ? [Number(t.DesiredCanaries ?? 0) > 0 ? t.Promoted === true : 'N/A'] : []),
      t.DesiredTotal,
      ...(canaries ? [t.DesiredCanaries ?? 0] : []),
      t.PlacedAllocs,
      t.HealthyAllocs,
      t.UnhealthyAllocs,
      deadline(t),
    ]),
  );
}

/** When the group must have progressed, or its deadline as a duration before it started. */
function deadline(t: Obj): string {
  const by = t.RequireProgressBy;
  if (typeof by === 'string' && !by.startsWith('0001-')) return by.replace('T', ' ').replace(/\.\d+/, '');
  const ns = Number(t.ProgressDeadline ?? 0);
  return ns ? `${Math.round(ns / 1e9)}s` : '<none>';
}

/** `deploymentBlock` then its "Deployed" table. */
export function deploymentLines(d: Obj, full: boolean): string {
  return `${deploymentBlock(d, full)}\n\nDeployed\n${deployedTable(d)}`;
}
