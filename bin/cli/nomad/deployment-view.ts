/**
 * A deployment as `nomad deployment status` and the "Latest Deployment" section of
 * `nomad job status` print it: its id, status and description, then per group how many allocs
 * are desired, placed, healthy and unhealthy, with nomad's optional columns: `Auto Revert` when a
 * group reverts automatically, `Promoted` and `Canaries` when a group asks for canaries, and
 * `Progress Deadline` (the time it must progress by, `N/A` before it started) when a group has
 * one.
 * @module
 */
import { kv, short, table } from './table.ts';

type Obj = Record<string, unknown>;

/** The `ID = ...` block; `full` adds the job and its version, as `deployment status` does; `verbose` the whole id. */
export function deploymentBlock(d: Obj, full: boolean, verbose = false): string {
  return kv([
    ['ID', verbose ? d.ID : short(d.ID)],
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

/** The "Deployed" table: one row per task group, sorted by name, with the columns nomad adds when a group needs them. */
export function deployedTable(d: Obj): string {
  const groups = Object.entries((d.TaskGroups as Record<string, Obj> | undefined) ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  const autoRevert = groups.some(([, t]) => t.AutoRevert === true);
  const canaries = groups.some(([, t]) => Number(t.DesiredCanaries ?? 0) > 0);
  const progress = groups.some(([, t]) => Number(t.ProgressDeadline ?? 0) !== 0);
  const head = [
    'Task Group',
    ...(autoRevert ? ['Auto Revert'] : []),
    ...(canaries ? ['Promoted'] : []),
    'Desired',
    ...(canaries ? ['Canaries'] : []),
    'Placed',
    'Healthy',
    'Unhealthy',
    ...(progress ? ['Progress Deadline'] : []),
  ];
  return table(
    head,
    groups.map(([g, t]) => [
      g,
      ...(autoRevert ? [t.AutoRevert === true] : []),
      ...(canaries ? [Number(t.DesiredCanaries ?? 0) > 0 ? t.Promoted === true : 'N/A'] : []),
      t.DesiredTotal,
      ...(canaries ? [t.DesiredCanaries ?? 0] : []),
      t.PlacedAllocs,
      t.HealthyAllocs,
      t.UnhealthyAllocs,
      ...(progress ? [progressBy(t)] : []),
    ]),
  );
}

/** When the group must have progressed (nomad's `formatTime`), `N/A` before it started. */
function progressBy(t: Obj): string {
  const by = t.RequireProgressBy;
  if (typeof by !== 'string' || by.startsWith('0001-')) return 'N/A';
  return by.replace(/\.\d+/, '');
}

/** `deploymentBlock` then, when it has groups, its "Deployed" table. */
export function deploymentLines(d: Obj, full: boolean, verbose = false): string {
  const block = deploymentBlock(d, full, verbose);
  return Object.keys((d.TaskGroups as Obj | undefined) ?? {}).length ? `${block}\n\nDeployed\n${deployedTable(d)}` : block;
}
