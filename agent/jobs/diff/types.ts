/**
 * Nomad's job diff as its API sends it (`api.JobDiff` and the diffs inside it): PascalCase names,
 * old and new values as Go prints them, `null` where Go has a nil slice or map.
 * @module
 */

/** How one thing changed between the current job version and the submitted one. */
export type DiffType = 'None' | 'Added' | 'Deleted' | 'Edited';

/** One primitive field, flattened as Nomad flattens it (`Count`, `Meta[foo]`, `args[0]`). */
export interface FieldDiff {
  Type: DiffType;
  Name: string;
  Old: string;
  New: string;
  /** `forces create` / `forces destroy` on a group's `Count`. */
  Annotations: string[] | null;
}

/** A nested block (`Config`, `RestartPolicy`, `Constraint`, `Datacenters`...). */
export interface ObjectDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
}

/** One task. */
export interface TaskDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  /** `forces create`, `forces destroy`, `forces in-place update`, `forces create/destroy update`. */
  Annotations: string[] | null;
}

/** One task group, with what the scheduler would do to its allocations. */
export interface TaskGroupDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Tasks: TaskDiff[] | null;
  /** The scheduler's counts by kind: `create`, `destroy`, `in-place update`, `create/destroy update`, `ignore`... */
  Updates: Record<string, number> | null;
}

/** The whole job. */
export interface JobDiff {
  Type: DiffType;
  ID: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  TaskGroups: TaskGroupDiff[] | null;
}
