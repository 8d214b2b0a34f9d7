/**
 * A job's version rule, pure: a register of the spec the job already has (ignoring the fields
 * the server sets) keeps its version unless the job was stopped; anything else is the next one.
 * @module
 */
import { completeApiJob } from '../jobspec/complete.ts';
import type { ApiJob, JobRecord } from '../state/types.ts';

/** The fields of an API job the server sets, not the submitter. */
export const SERVER_JOB_FIELDS = ['Version', 'Stop', 'Status', 'SubmitTime', 'CreateIndex', 'ModifyIndex', 'JobModifyIndex', 'Stable'] as const;

/** `apiJob` without the fields the server sets ({@link SERVER_JOB_FIELDS}). */
export function submittedSpec(apiJob: ApiJob): ApiJob {
  const spec: Record<string, unknown> = { ...apiJob };
  for (const k of SERVER_JOB_FIELDS) delete spec[k];
  return spec as ApiJob;
}

/** Same job spec, ignoring the fields the server sets (and whether unset fields were written out). */
export function sameSpec(a: ApiJob, b: ApiJob): boolean {
  return JSON.stringify(submittedSpec(completeApiJob(a))) === JSON.stringify(submittedSpec(completeApiJob(b)));
}

/** The version registering `apiJob` over `prev` (the job as stored, if any) gives it. */
export function nextJobVersion(prev: Pick<JobRecord, 'version' | 'apiJob' | 'stop'> | undefined, apiJob: ApiJob): number {
  if (!prev) return 0;
  return prev.version + (sameSpec(prev.apiJob, apiJob) && !prev.stop ? 0 : 1);
}
