/**
 * A job version's `Stable` flag and `auto_revert` (Nomad's `latestStableJob` and
 * `handleRollbackValidity`): a version is stable once a deployment of it succeeded; a failed
 * deployment of a group with `auto_revert` re-registers the newest stable version, unless that
 * version's spec is the job's own (a revert that could not help: it would fail the same way).
 * @module
 */
import { sameSpec } from '../jobs/job-version.ts';
import type { AgentState } from '../state/store.ts';
import type { Deployment, JobRecord } from '../state/types.ts';

/** Nomad's `Stable`: a deployment of this job version ended successful. */
export function isStable(state: AgentState, jobId: string, version: number): boolean {
  for (const d of state.deployments.values()) if (d.jobId === jobId && d.jobVersion === version && d.status === 'successful') return true;
  return false;
}

/** What a failing deployment says, and the job version it reverts to (if it does). */
export interface Rollback {
  description: string;
  revert?: JobRecord;
}

/**
 * The failure's description and revert target. `base` is why it failed ("Failed due to
 * unhealthy allocations", "Deployment marked as failed"); `sayNoTarget` adds Nomad's "no stable
 * job version to auto revert to" when there is none (an operator's fail does, an unhealthy alloc does not).
 */
export function rollbackFor(state: AgentState, d: Deployment, base: string, sayNoTarget: boolean): Rollback {
  if (!Object.values(d.taskGroups).some((g) => g.autoRevert)) return { description: base };
  const versions = state.versions.get(d.jobId) ?? [];
  const target = [...versions].reverse().find((v) => v.version !== d.jobVersion && isStable(state, d.jobId, v.version));
  if (!target) return { description: sayNoTarget ? `${base} - no stable job version to auto revert to` : base };
  const current = versions.find((v) => v.version === d.jobVersion) ?? state.jobs.get(d.jobId);
  if (current && sameSpec(current.apiJob, target.apiJob))
    return { description: `${base} - not rolling back to stable job version ${target.version} as current job has same specification` };
  return { description: `${base} - rolling back to job version ${target.version}`, revert: target };
}
