/**
 * Nomad's job plan reply (`JobPlanResponse`) shaped from the core's {@link JobPlan}: per group
 * how many allocs would be placed, stopped, updated in place; which allocs would be preempted;
 * and, asked for, the job's field-by-field diff against its current version.
 * @module
 */
import type { JobPlan } from '../core.ts';
import { completeApiJob } from '../jobspec/complete.ts';
import { planDiff } from '../jobs/diff/index.ts';
import { formatWarnings } from '../jobs/placement-warnings.ts';
import { apiAllocMetric } from './alloc-metric.ts';

/**
 * The reply for `p`. With `diff`, the diff against the current version (`contextual`: unchanged
 * fields of changed blocks listed too, as Nomad's plan always does).
 */
export function planReply(p: JobPlan, opts: { diff?: boolean; contextual?: boolean } = {}): Record<string, unknown> {
  const { plan } = p;
  const groups = Object.fromEntries(
    Object.entries(plan.desiredTgUpdates).map(([g, u]) => [
      g,
      {
        Place: u.place,
        Stop: u.stop,
        InPlaceUpdate: u.inPlaceUpdate,
        DestructiveUpdate: u.destructiveUpdate,
        Ignore: u.ignore,
        Migrate: u.migrate,
        Canary: u.canary,
        Preemptions: u.preemptions,
        RescheduleNow: u.rescheduleNow,
        RescheduleLater: u.rescheduleLater,
        // A one-node agent never loses its client, so nothing disconnects or reconnects.
        Disconnect: 0,
        Reconnect: 0,
      },
    ]),
  );
  return {
    Annotations: {
      DesiredTGUpdates: groups,
      PreemptedAllocs: plan.preempt.map((s) => ({
        ID: s.id,
        JobID: s.jobId,
        TaskGroup: s.taskGroup,
        Name: s.name ?? '',
        NodeID: s.nodeId,
        JobPriority: s.job.priority ?? 50,
      })),
    },
    FailedTGAllocs: Object.keys(plan.failedTgAllocs).length
      ? Object.fromEntries(Object.entries(plan.failedTgAllocs).map(([g, f]) => [g, apiAllocMetric(f)]))
      : null,
    JobModifyIndex: p.prev?.jobModifyIndex ?? 0,
    CreatedEvals: null,
    Diff: opts.diff
      ? planDiff(
          p.prev && { api: completeApiJob(p.prev.apiJob), job: p.prev.job },
          { api: completeApiJob(p.apiJob), job: p.job },
          groups,
          opts.contextual ?? true,
        )
      : null,
    Index: p.index,
    NextPeriodicLaunch: '0001-01-01T00:00:00Z',
    Warnings: formatWarnings(p.warnings),
  };
}
