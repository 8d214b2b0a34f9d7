/** Deployment records for the deploy specs: a task group's entry and a deployment, each with its overrides. */
import type { Deployment } from '../../../agent/state/types.ts';

/** A deployment's entry for one task group. */
export type DeploymentGroup = Deployment['taskGroups'][string];

/** A group entry: 1 of 2 placed, none healthy yet, 1 ms health timings unless `over` says otherwise. */
export const deploymentGroup = (over: Partial<DeploymentGroup> = {}): DeploymentGroup => ({
  desiredTotal: 2,
  placedAllocs: 1,
  healthyAllocs: 0,
  unhealthyAllocs: 0,
  maxParallel: 1,
  minHealthyTimeMs: 1,
  healthyDeadlineMs: 1,
  progressDeadlineMs: 600_000,
  ...over,
});

/** A running deployment of job `web` in `default` (groups, version and indexes from `over`). */
export const deploymentRecord = (id: string, over: Partial<Deployment> = {}): Deployment => ({
  id,
  namespace: 'default',
  jobId: 'web',
  jobVersion: 1,
  jobModifyIndex: 1,
  jobCreateIndex: 1,
  status: 'running',
  statusDescription: 'Deployment is running',
  taskGroups: { g: deploymentGroup() },
  createIndex: 1,
  modifyIndex: 1,
  createTime: 0,
  modifyTime: 0,
  ...over,
});
