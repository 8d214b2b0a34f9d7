/**
 * What the plan adds to a job diff (Nomad's `scheduler.Annotate`): each group's `Updates` (the
 * scheduler's counts, under Nomad's names), `forces create` / `forces destroy` on a changed
 * `Count`, and on each changed task what its change forces.
 *
 * Nomad guesses a task's annotation from the diff's field names; berth asks its scheduler's own
 * rule (`destructiveTaskChange`, the one that picks replacement or in-place), so a task marked
 * `forces in-place update` is one the plan really updates in place.
 * @module
 */
import type { FieldDiff, JobDiff, TaskDiff, TaskGroupDiff } from './types.ts';

/** One group's line of the plan's `DesiredTGUpdates` (Nomad's names). */
export interface DesiredTGUpdate {
  Ignore?: number;
  Place?: number;
  Migrate?: number;
  Stop?: number;
  Canary?: number;
  InPlaceUpdate?: number;
  DestructiveUpdate?: number;
}

export const FORCES_CREATE = 'forces create';
export const FORCES_DESTROY = 'forces destroy';
export const FORCES_IN_PLACE = 'forces in-place update';
export const FORCES_DESTRUCTIVE = 'forces create/destroy update';

/** Nomad's update kinds, by the `DesiredTGUpdates` field each counts. */
const KINDS: Array<[keyof DesiredTGUpdate, string]> = [
  ['Ignore', 'ignore'],
  ['Place', 'create'],
  ['Migrate', 'migrate'],
  ['Stop', 'destroy'],
  ['Canary', 'canary'],
  ['InPlaceUpdate', 'in-place update'],
  ['DestructiveUpdate', 'create/destroy update'],
];

/**
 * Adds the plan's annotations to `diff` (in place) and returns it. `replaces(group, task)` says
 * whether that task's change needs new allocations (asked only for an edited task of an edited group).
 */
export function annotateDiff(diff: JobDiff, desired: Record<string, DesiredTGUpdate> | undefined, replaces: (group: string, task: string) => boolean): JobDiff {
  for (const g of diff.TaskGroups ?? []) {
    const u = desired?.[g.Name];
    if (u) {
      const counts = KINDS.filter(([k]) => (u[k] ?? 0) !== 0).map(([k, name]) => [name, u[k]!] as const);
      g.Updates = Object.fromEntries(counts.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    annotateCount(g.Fields ?? []);
    for (const t of g.Tasks ?? []) annotateTask(t, g, replaces);
  }
  return diff;
}

function annotateCount(fields: FieldDiff[]): void {
  const count = fields.find((f) => f.Name === 'Count');
  if (!count) return;
  const from = count.Old === '' ? 0 : Number.parseInt(count.Old, 10);
  const to = count.New === '' ? 0 : Number.parseInt(count.New, 10);
  if (from < to) count.Annotations = [...(count.Annotations ?? []), FORCES_CREATE];
  else if (to < from) count.Annotations = [...(count.Annotations ?? []), FORCES_DESTROY];
}

function annotateTask(t: TaskDiff, group: TaskGroupDiff, replaces: (group: string, task: string) => boolean): void {
  if (t.Type === 'None') return;
  const add = (a: string) => (t.Annotations = [...(t.Annotations ?? []), a]);
  if (group.Type === 'Added' || group.Type === 'Deleted') {
    if (t.Type === 'Added') return void add(FORCES_CREATE);
    if (t.Type === 'Deleted') return void add(FORCES_DESTROY);
  }
  // A task added to or removed from a kept group changes the group's allocations' shape.
  const destructive = t.Type !== 'Edited' || replaces(group.Name, t.Name);
  add(destructive ? FORCES_DESTRUCTIVE : FORCES_IN_PLACE);
}
