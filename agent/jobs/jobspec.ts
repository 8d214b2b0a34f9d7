/**
 * The agent's one seam to the jobspec (`agent/jobspec`): job file text → Nomad API job
 * (canonicalised: Nomad's defaults filled), and Nomad API job → berth's {@link Job}. Errors are
 * `JobspecError`s naming the file, line, column and field path.
 * @module
 */
import { JobspecError, type Job } from '../../index.ts';
import { jobFromApi, parseJobspec } from '../jobspec/index.ts';
import type { ApiJob } from '../state/types.ts';

/** A job file or an API job the agent cannot read (berth's `JobspecError`). */
export const JobFileError = JobspecError;

/** Options of {@link parseJobFile}. */
export interface ParseJobFileOptions {
  filename?: string;
  /** `-var k=v` values. */
  vars?: Record<string, string>;
  /** Variable files already read (a `/v1/jobs/parse` request's `Variables`, HCL or JSON). */
  varFiles?: Array<{ filename: string; text: string }>;
  /** Fill in Nomad's defaults (default true); false answers the job as the file has it. */
  canonicalize?: boolean;
}

/** A job file (HCL2, or JSON either `{Job: ...}` or the bare API job) → the canonical Nomad API job. */
export async function parseJobFile(text: string, opts: ParseJobFileOptions = {}): Promise<ApiJob> {
  const job = await parseJobspec(text, {
    // A server's parse reads no files of its own disk for a request (Nomad's AllowFS false).
    allowFs: false,
    ...(opts.filename ? { filename: opts.filename } : {}),
    ...(opts.vars ? { vars: opts.vars } : {}),
    ...(opts.varFiles ? { varFiles: opts.varFiles } : {}),
    ...(opts.canonicalize === false ? { canonicalize: false } : {}),
  });
  if (typeof job.ID !== 'string' || job.ID === '') throw new JobspecError(`${opts.filename ?? 'job'}: the job needs an ID`);
  return job as ApiJob;
}

/** The berth job an API job describes (validated by berth's one schema). */
export function apiJobToJob(apiJob: ApiJob): Job {
  return jobFromApi(apiJob);
}
