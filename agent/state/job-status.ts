/**
 * A job's status as Nomad derives it from its allocations: what the API shows and what the
 * server GC asks ("is the job dead?").
 * @module
 */
import { isClientTerminalStatus } from '../../index.ts';
import type { AgentState } from './store.ts';
import type { JobRecord } from './types.ts';

/** Nomad's job status: dead once stopped with nothing running, running when something is. */
export function jobStatus(job: JobRecord, state: Pick<AgentState, 'allocs'>): 'pending' | 'running' | 'dead' {
  const allocs = [...state.allocs.values()].filter((s) => s.alloc.jobId === job.id);
  const live = allocs.some((s) => s.alloc.desiredStatus === 'run' && !isClientTerminalStatus(s.alloc.clientStatus));
  if (live) return 'running';
  if (job.stop) return 'dead';
  // A periodic or parameterized parent runs as long as it is registered (its children do the work).
  if ((job.apiJob.Periodic || job.apiJob.ParameterizedJob) && !job.apiJob.ParentID) return 'running';
  if ((job.apiJob.Type === 'batch' || job.apiJob.Type === 'sysbatch') && allocs.length > 0) return 'dead';
  return 'pending';
}
