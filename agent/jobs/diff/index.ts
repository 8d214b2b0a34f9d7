/**
 * The job diff a plan answers with (`Diff` of Nomad's `JobPlanResponse`): {@link jobDiff} of the
 * current version and the submitted job, annotated with the plan's counts and, per changed task,
 * what the scheduler's own rule says the change forces.
 * @module
 */
import type { Job } from '../../../index.ts';
import { destructiveTaskChange } from '../../scheduler/index.ts';
import type { ApiJob } from '../../state/types.ts';
import { annotateDiff, type DesiredTGUpdate } from './annotate.ts';
import { jobDiff } from './job.ts';
import type { JobDiff } from './types.ts';

export type { DiffType, FieldDiff, JobDiff, ObjectDiff, TaskDiff, TaskGroupDiff } from './types.ts';
export { annotateDiff, type DesiredTGUpdate } from './annotate.ts';
export { jobDiff } from './job.ts';
export { JobDiffError } from './job-diff-error.ts';

/** One version of a job: as the API has it, and as berth's scheduler reads it. */
export interface JobVersion {
  api: ApiJob;
  job: Job;
}

/**
 * The plan's diff of `current` (undefined for a job not registered yet) and `next`, with
 * `desired` (the plan's `DesiredTGUpdates`) as each group's `Updates`.
 */
export function planDiff(current: JobVersion | undefined, next: JobVersion, desired: Record<string, DesiredTGUpdate>, contextual: boolean): JobDiff {
  const diff = jobDiff(current?.api, next.api, contextual);
  return annotateDiff(diff, desired, (group, task) => !current || destructiveTaskChange(current.job, next.job, group, task) !== undefined);
}
