/**
 * berth's records in the JSON Nomad's HTTP API returns: PascalCase, times as Unix nanoseconds
 * (task state times as RFC 3339, Nomad's zero time when unset), durations in nanoseconds.
 * @module
 */
import type { Allocation, TaskState } from '../../index.ts';
import { jobStatus } from '../state/job-status.ts';
import { apiAllocMetric } from './alloc-metric.ts';
import type { SchedulerConfig } from '../state/store.ts';
import type { AgentState } from '../state/store.ts';
import type { ApiJob, Deployment, Evaluation, JobRecord, NodeRecord, ServerAlloc } from '../state/types.ts';

/** Nomad's zero time. */
export const ZERO_TIME = '0001-01-01T00:00:00Z';
const nanos = (ms: number | undefined) => (ms === undefined ? 0 : Math.round(ms * 1e6));
const rfc = (ms: number | undefined) => (ms === undefined ? ZERO_TIME : new Date(ms).toISOString());

/** A task state as Nomad's `TaskState`. */
export function apiTaskState(t: TaskState): Record<string, unknown> {
  return {
    State: t.state,
    Failed: t.failed,
    Restarts: t.restarts,
    LastRestart: rfc(t.lastRestart),
    StartedAt: rfc(t.startedAt),
    FinishedAt: rfc(t.finishedAt),
    Events: t.events.map((e) => ({
      Type: e.type,
      Time: nanos(e.time),
      Message: e.message ?? '',
      DisplayMessage: e.displayMessage,
      Details: e.details,
      ExitCode: Number(e.details.exit_code ?? 0),
      Signal: Number(e.details.signal ?? 0),
      KillTimeout: 0,
      RestartReason: e.details.restart_reason ?? '',
      DriverError: e.details.driver_error ?? '',
      FailsTask: e.details.fails_task === 'true',
    })),
  };
}

function resources(a: Allocation): Record<string, unknown> {
  const r = a.allocatedResources;
  if (r)
    return {
      Tasks: Object.fromEntries(
        Object.entries(r.tasks).map(([t, v]) => [
          t,
          { Cpu: { CpuShares: v.cpu, ReservedCores: v.cores ?? null }, Memory: { MemoryMB: v.memoryMB, MemoryMaxMB: v.memoryMaxMB ?? 0 }, Networks: null },
        ]),
      ),
      Shared: {
        DiskMB: r.shared.diskMB,
        Networks: null,
        Ports: r.shared.ports.length ? r.shared.ports.map((p) => ({ Label: p.label, Value: p.value, To: p.to, HostIP: p.hostIp })) : null,
      },
    };
  const g = a.job.taskGroups.find((x) => x.name === a.taskGroup);
  const tasks: Record<string, unknown> = {};
  for (const t of g?.tasks ?? [])
    tasks[t.name] = {
      Cpu: { CpuShares: t.resources?.cpu ?? 100 },
      Memory: { MemoryMB: t.resources?.memoryMB ?? 300, MemoryMaxMB: t.resources?.memoryMaxMB ?? 0 },
      Networks: null,
    };
  return { Tasks: tasks, Shared: { DiskMB: g?.ephemeralDisk?.sizeMB ?? 300, Networks: null, Ports: null } };
}

/** The stub `/v1/allocations` and `/v1/job/:id/allocations` list. */
export function apiAllocStub(s: ServerAlloc, state: AgentState): Record<string, unknown> {
  const a = s.alloc;
  const node = state.node;
  return {
    ID: a.id,
    EvalID: a.evalId ?? '',
    Name: a.name ?? '',
    Namespace: a.namespace ?? 'default',
    NodeID: a.nodeId,
    NodeName: node?.name ?? '',
    JobID: a.jobId,
    JobType: a.job.type,
    JobVersion: a.jobVersion ?? 0,
    TaskGroup: a.taskGroup,
    DesiredStatus: a.desiredStatus,
    DesiredDescription: a.desiredDescription ?? '',
    ClientStatus: a.clientStatus,
    ClientDescription: a.clientDescription ?? '',
    DesiredTransition: { Migrate: null, Reschedule: null, ForceReschedule: null, NoShutdownDelay: a.desiredTransition?.noShutdownDelay ?? null },
    TaskStates: a.taskStates ? Object.fromEntries(Object.entries(a.taskStates).map(([k, v]) => [k, apiTaskState(v)])) : null,
    DeploymentStatus: a.deploymentStatus
      ? {
          Healthy: a.deploymentStatus.healthy ?? null,
          Timestamp: rfc(a.deploymentStatus.timestamp),
          Canary: !!a.deploymentStatus.canary,
          ModifyIndex: s.modifyIndex,
        }
      : null,
    FollowupEvalID: a.followupEvalId ?? '',
    NextAllocation: s.nextAllocation ?? '',
    PreviousAllocation: a.previousAllocation ?? '',
    PreemptedAllocations: a.preemptedAllocations ?? null,
    PreemptedByAllocation: s.preemptedBy ?? '',
    RescheduleTracker: a.rescheduleTracker
      ? {
          Events: a.rescheduleTracker.events.map((e) => ({
            RescheduleTime: nanos(e.rescheduleTime),
            PrevAllocID: e.prevAllocId,
            PrevNodeID: e.prevNodeId,
            Delay: e.delayMs * 1e6,
          })),
        }
      : null,
    CreateIndex: s.createIndex,
    ModifyIndex: s.modifyIndex,
    CreateTime: nanos(a.createTime),
    ModifyTime: nanos(a.modifyTime),
  };
}

/** One allocation in full (`/v1/allocation/:id`): the stub plus the job and resources. */
export function apiAlloc(s: ServerAlloc, state: AgentState): Record<string, unknown> {
  const versions = state.versions.get(s.alloc.jobId);
  const job = versions?.find((v) => v.version === (s.alloc.jobVersion ?? 0))?.apiJob ?? state.jobs.get(s.alloc.jobId)?.apiJob ?? null;
  // JobType belongs to the list stub only; Nomad's full Allocation has no such field.
  const { JobType: _jobType, ...stub } = apiAllocStub(s, state);
  return {
    ...stub,
    Job: job,
    DeploymentID: s.alloc.deploymentId ?? '',
    MigrateToken: s.alloc.migrateToken ?? '',
    AllocatedResources: resources(s.alloc),
    AllocModifyIndex: s.alloc.allocModifyIndex,
    Metrics: s.metrics ? apiAllocMetric(s.metrics, state.node?.nodePool ?? 'default') : null,
    Resources: null,
  };
}

/** An evaluation as Nomad's `Evaluation`. */
export function apiEval(e: Evaluation): Record<string, unknown> {
  return {
    ID: e.id,
    Namespace: e.namespace,
    Priority: e.priority,
    Type: e.type,
    TriggeredBy: e.triggeredBy,
    JobID: e.jobId,
    JobModifyIndex: e.jobModifyIndex ?? 0,
    NodeID: e.nodeId ?? '',
    DeploymentID: e.deploymentId ?? '',
    Status: e.status,
    StatusDescription: e.statusDescription ?? '',
    FailedTGAllocs: e.failedTgAllocs ? Object.fromEntries(Object.entries(e.failedTgAllocs).map(([g, f]) => [g, apiAllocMetric(f)])) : null,
    NextEval: e.nextEval ?? '',
    WaitUntil: e.waitUntil ? new Date(e.waitUntil).toISOString() : ZERO_TIME,
    BlockedEval: e.blockedEval ?? '',
    PreviousEval: e.previousEval ?? '',
    QueuedAllocations: e.queuedAllocations ?? null,
    PlanAnnotations: e.plan ? { PreemptedAllocs: e.plan.preempted.map((p) => ({ ID: p.allocId, PreemptedByAllocation: p.by })), DesiredTGUpdates: null } : null,
    CreateIndex: e.createIndex,
    ModifyIndex: e.modifyIndex,
    CreateTime: nanos(e.createTime),
    ModifyTime: nanos(e.modifyTime),
  };
}

/** What `/v1/job/:id/summary` and the job list count per group. */
export function jobSummary(jobId: string, state: AgentState): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  const job = state.jobs.get(jobId);
  for (const g of (job?.apiJob.TaskGroups as Array<{ Name: string }> | undefined) ?? [])
    out[g.Name] = { Queued: 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 };
  for (const s of state.allocs.values()) {
    if (s.alloc.jobId !== jobId) continue;
    const c = (out[s.alloc.taskGroup] ??= { Queued: 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 });
    const k = { pending: 'Starting', running: 'Running', complete: 'Complete', failed: 'Failed', lost: 'Lost', unknown: 'Unknown' }[s.alloc.clientStatus];
    c[k] = (c[k] ?? 0) + 1;
  }
  const blocked = [...state.evals.values()].find((e) => e.jobId === jobId && e.status === 'blocked');
  if (blocked) {
    const prev = blocked.previousEval ? state.evals.get(blocked.previousEval) : undefined;
    for (const [g, n] of Object.entries(blocked.queuedAllocations ?? prev?.queuedAllocations ?? {})) if (out[g]) out[g].Queued = n;
  }
  return out;
}

/** Nomad's job status (kept with the state, which the server GC reads too). */
export { jobStatus };

/** The full job, with its live status. */
export function apiJob(job: JobRecord, state: AgentState): ApiJob {
  return { ...job.apiJob, Status: jobStatus(job, state), Stable: false, ModifyIndex: job.modifyIndex };
}

/** A `/v1/jobs` entry. */
export function apiJobStub(job: JobRecord, state: AgentState): Record<string, unknown> {
  const j = job.apiJob;
  return {
    ID: job.id,
    ParentID: j.ParentID ?? '',
    Name: j.Name ?? job.id,
    Namespace: job.namespace,
    Datacenters: j.Datacenters ?? ['*'],
    Type: j.Type,
    Priority: j.Priority,
    Periodic: false,
    ParameterizedJob: false,
    Stop: job.stop,
    Status: jobStatus(job, state),
    StatusDescription: '',
    Version: job.version,
    JobSummary: { JobID: job.id, Namespace: job.namespace, Summary: jobSummary(job.id, state), CreateIndex: job.createIndex, ModifyIndex: job.modifyIndex },
    CreateIndex: job.createIndex,
    ModifyIndex: job.modifyIndex,
    JobModifyIndex: job.jobModifyIndex,
    SubmitTime: nanos(job.submitTime),
  };
}

/** The node, in full (`/v1/node/:id`). */
export function apiNode(n: NodeRecord, drivers: string[]): Record<string, unknown> {
  return {
    ...apiNodeStub(n, drivers),
    SecretID: '',
    HTTPAddr: n.httpAddr,
    TLSEnabled: n.tlsEnabled,
    Attributes: n.attributes ?? {
      'kernel.name': 'linux',
      'cpu.totalcompute': String(n.cpuMHz),
      'memory.totalbytes': String(n.memoryMB * 1024 * 1024),
    },
    NodeResources: { Cpu: { CpuShares: n.cpuMHz }, Memory: { MemoryMB: n.memoryMB }, Disk: { DiskMB: n.diskMB }, Networks: null },
    ReservedResources: { Cpu: { CpuShares: n.reserved.cpu }, Memory: { MemoryMB: n.reserved.memoryMB }, Disk: { DiskMB: n.reserved.diskMB } },
    Meta: n.meta ?? {},
    NodeClass: n.nodeClass ?? '',
    ComputedClass: '',
    Drain: false,
    DrainStrategy: null,
    Events: [],
  };
}

/** A `/v1/nodes` entry. */
export function apiNodeStub(n: NodeRecord, drivers: string[]): Record<string, unknown> {
  return {
    ID: n.id,
    Name: n.name,
    Datacenter: n.datacenter,
    Address: n.httpAddr.split(':')[0],
    HTTPAddr: n.httpAddr,
    NodeClass: n.nodeClass ?? '',
    NodePool: n.nodePool ?? 'default',
    Version: 'berth',
    Drain: false,
    SchedulingEligibility: 'eligible',
    Status: n.status,
    StatusDescription: '',
    Drivers: n.driverHealth
      ? Object.fromEntries(
          Object.entries(n.driverHealth).map(([d, f]) => [
            d,
            { Detected: f.detected, Healthy: f.healthy, HealthDescription: f.healthDescription, Attributes: f.attributes },
          ]),
        )
      : Object.fromEntries(drivers.map((d) => [d, { Detected: true, Healthy: true, HealthDescription: 'Healthy', Attributes: {} }])),
    CreateIndex: n.createIndex,
    ModifyIndex: n.modifyIndex,
  };
}

/** A deployment as Nomad's `Deployment`. */
export function apiDeployment(d: Deployment): Record<string, unknown> {
  return {
    ID: d.id,
    Namespace: d.namespace,
    JobID: d.jobId,
    JobVersion: d.jobVersion,
    JobModifyIndex: d.jobModifyIndex,
    JobCreateIndex: d.jobCreateIndex,
    Status: d.status,
    StatusDescription: d.statusDescription,
    TaskGroups: Object.fromEntries(
      Object.entries(d.taskGroups).map(([g, t]) => [
        g,
        {
          AutoRevert: false,
          AutoPromote: false,
          Promoted: false,
          DesiredCanaries: 0,
          DesiredTotal: t.desiredTotal,
          PlacedAllocs: t.placedAllocs,
          HealthyAllocs: t.healthyAllocs,
          UnhealthyAllocs: t.unhealthyAllocs,
          ProgressDeadline: t.progressDeadlineMs * 1e6,
          RequireProgressBy: ZERO_TIME,
        },
      ]),
    ),
    CreateIndex: d.createIndex,
    ModifyIndex: d.modifyIndex,
  };
}

/** `/v1/operator/scheduler/configuration`'s `SchedulerConfig`. */
export function apiSchedulerConfig(c: SchedulerConfig): Record<string, unknown> {
  return {
    SchedulerAlgorithm: 'binpack',
    MemoryOversubscriptionEnabled: false,
    RejectJobRegistration: false,
    PauseEvalBroker: false,
    PreemptionConfig: {
      SystemSchedulerEnabled: c.preemption.systemSchedulerEnabled,
      SysBatchSchedulerEnabled: c.preemption.sysbatchSchedulerEnabled,
      BatchSchedulerEnabled: c.preemption.batchSchedulerEnabled,
      ServiceSchedulerEnabled: c.preemption.serviceSchedulerEnabled,
    },
    CreateIndex: c.createIndex,
    ModifyIndex: c.modifyIndex,
  };
}
