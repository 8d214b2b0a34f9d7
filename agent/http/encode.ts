/**
 * berth's records in the JSON Nomad's HTTP API returns: PascalCase, times as Unix nanoseconds
 * (task state times as RFC 3339, Nomad's zero time when unset), durations in nanoseconds.
 * @module
 */
import { parseGoDuration, type Allocation, type TaskState } from '../../index.ts';
import { completeApiJob } from '../jobspec/complete.ts';
import { jobStatus } from '../state/job-status.ts';
import { isStable } from '../deploy/rollback.ts';
import { NOMAD_API_VERSION } from '../config/fingerprint.ts';
import { PREEMPTION_KEYS } from '../config/preemption.ts';
import { DEFAULT_MAX_DYNAMIC_PORT, DEFAULT_MIN_DYNAMIC_PORT } from '../scheduler/ports.ts';
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
    Events: t.events.map(apiTaskEvent),
  };
}

const int = (v: string | undefined) => (v !== undefined && /^-?\d+$/.test(v) ? Number(v) : 0);

function durationNs(v: string | undefined): number {
  if (!v) return 0;
  try {
    return Math.round(parseGoDuration(v) * 1e6);
  } catch {
    return 0;
  }
}

/** A task event as Nomad's `TaskEvent`: the typed fields are the details Nomad's setters also write. */
function apiTaskEvent(e: TaskState['events'][number]): Record<string, unknown> {
  const d = e.details;
  return {
    Type: e.type,
    Time: nanos(e.time),
    DisplayMessage: e.displayMessage,
    Details: d,
    Message: e.message ?? '',
    FailsTask: d.fails_task === 'true',
    RestartReason: d.restart_reason ?? '',
    SetupError: d.setup_error ?? '',
    DriverError: d.driver_error ?? '',
    DriverMessage: d.driver_message ?? '',
    ExitCode: int(d.exit_code),
    Signal: int(d.signal),
    KillReason: d.kill_reason ?? '',
    KillTimeout: durationNs(d.kill_timeout),
    KillError: d.kill_error ?? '',
    StartDelay: int(d.start_delay),
    DownloadError: d.download_error ?? '',
    ValidationError: d.validation_error ?? '',
    DiskLimit: int(d.disk_limit),
    DiskSize: 0,
    FailedSibling: d.failed_sibling ?? '',
    VaultError: d.vault_renewal_error ?? '',
    TaskSignalReason: d.task_signal_reason ?? '',
    TaskSignal: d.task_signal ?? '',
    GenericSource: '',
  };
}

function resources(a: Allocation): Record<string, unknown> {
  const r = a.allocatedResources;
  if (r)
    return {
      Tasks: Object.fromEntries(
        Object.entries(r.tasks).map(([t, v]) => [
          t,
          { Cpu: { CpuShares: v.cpu }, Memory: { MemoryMB: v.memoryMB, MemoryMaxMB: v.memoryMaxMB ?? 0 }, Networks: null, Devices: null },
        ]),
      ),
      Shared: {
        DiskMB: r.shared.diskMB,
        Networks: sharedNetworks(a, r.shared.ports),
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
      Devices: null,
    };
  return { Tasks: tasks, Shared: { DiskMB: g?.ephemeralDisk?.sizeMB ?? 300, Networks: null, Ports: null } };
}

/**
 * The group network as the scheduler offered it (Nomad's `AllocatedSharedResources.Networks`):
 * host mode, the node's address, the group's static ports reserved and the others dynamic, each
 * with the value it got. None when the group asks for no port.
 */
function sharedNetworks(a: Allocation, ports: ReadonlyArray<{ label: string; value: number; to?: number; hostIp: string }>): Record<string, unknown>[] | null {
  if (!ports.length) return null;
  const net = a.job.taskGroups.find((g) => g.name === a.taskGroup)?.networks?.[0];
  const reserved = new Set((net?.reservedPorts ?? []).map((p) => p.label));
  const port = (p: (typeof ports)[number]) => ({ Label: p.label, Value: p.value, To: p.to ?? 0, HostNetwork: 'default', IgnoreCollision: false });
  const of = (static_: boolean) => {
    const list = ports.filter((p) => reserved.has(p.label) === static_).map(port);
    return list.length ? list : null;
  };
  return [
    {
      Mode: 'host',
      Device: '',
      CIDR: '',
      IP: ports[0]!.hostIp,
      DNS: null,
      ReservedPorts: of(true),
      DynamicPorts: of(false),
      Hostname: '',
      MBits: 0,
      CNI: null,
    },
  ];
}

/**
 * Nomad's pre-0.9 `TaskResources` and `Resources` of an allocation, which its servers still fill
 * (the scheduler's `OldTaskResources`, and the state store's sum of the tasks and the shared
 * disk) and its CLI still reads (`nomad alloc status`'s Task Resources, `nomad node status`'s
 * Allocated Resources): derived here from the allocated resources.
 */
function legacyResources(a: Allocation): { tasks: Record<string, unknown>; total: Record<string, unknown> } {
  const r = resources(a) as {
    Tasks: Record<string, { Cpu: { CpuShares: number }; Memory: { MemoryMB: number; MemoryMaxMB: number } }>;
    Shared: { DiskMB: number };
  };
  const one = (cpu: number, memoryMB: number, memoryMaxMB: number, diskMB: number) => ({
    CPU: cpu,
    Cores: 0,
    MemoryMB: memoryMB,
    MemoryMaxMB: memoryMaxMB,
    DiskMB: diskMB,
    IOPS: 0,
    Networks: null,
    Devices: null,
    NUMA: null,
    SecretsMB: 0,
  });
  const tasks = Object.fromEntries(Object.entries(r.Tasks).map(([t, v]) => [t, one(v.Cpu.CpuShares, v.Memory.MemoryMB, v.Memory.MemoryMaxMB, 0)]));
  const all = Object.values(r.Tasks);
  const sum = (f: (v: (typeof all)[number]) => number) => all.reduce((n, v) => n + f(v), 0);
  return {
    tasks,
    total: one(
      sum((v) => v.Cpu.CpuShares),
      sum((v) => v.Memory.MemoryMB),
      sum((v) => v.Memory.MemoryMaxMB),
      r.Shared.DiskMB,
    ),
  };
}

const taskStates = (a: Allocation) => (a.taskStates ? Object.fromEntries(Object.entries(a.taskStates).map(([k, v]) => [k, apiTaskState(v)])) : null);

function deploymentStatus(s: ServerAlloc): Record<string, unknown> | null {
  const d = s.alloc.deploymentStatus;
  return d ? { Healthy: d.healthy ?? null, Timestamp: rfc(d.timestamp), Canary: !!d.canary, ModifyIndex: s.modifyIndex } : null;
}

function rescheduleTracker(a: Allocation): Record<string, unknown> | null {
  return a.rescheduleTracker
    ? {
        Events: a.rescheduleTracker.events.map((e) => ({
          RescheduleTime: nanos(e.rescheduleTime),
          PrevAllocID: e.prevAllocId,
          PrevNodeID: e.prevNodeId,
          Delay: e.delayMs * 1e6,
        })),
      }
    : null;
}

/** The space-separated words of `S`, as a union. */
type Words<S extends string, Found extends string = never> = S extends `${infer W} ${infer Rest}` ? Words<Rest, Found | W> : Found | S;

/**
 * Nomad's structs that come in two shapes (`Allocation` and `AllocationListStub`, `Evaluation` and
 * `EvaluationStub`) are one field list each, and the shapes are orders of its names: the encoder
 * of `order` (space-separated names of `fields`; a name it lacks does not compile) fills those
 * fields in that order, the JSON key order Nomad's Go client tests read.
 */
function encoderOf<Args extends unknown[], K extends string, S extends string>(
  fields: Record<K, (...args: Args) => unknown>,
  order: S & (Words<S> extends K ? unknown : never),
): (...args: Args) => Record<string, unknown> {
  const names = order.split(' ') as K[];
  return (...args) => {
    const out: Record<string, unknown> = {};
    for (const name of names) out[name] = fields[name](...args);
    return out;
  };
}

/** What an allocation's API fields are made of; `legacy` is made once, on first use. */
interface AllocSource {
  s: ServerAlloc;
  a: Allocation;
  state: AgentState;
  legacy(): ReturnType<typeof legacyResources>;
}

/**
 * Every field of Nomad's `Allocation` and `AllocationListStub`, once: how berth fills it. Which
 * fields each holds, and in which order, is {@link allocFull} and {@link allocStub}.
 */
const ALLOC_FIELDS = {
  ID: ({ a }) => a.id,
  Namespace: ({ a }) => a.namespace ?? 'default',
  EvalID: ({ a }) => a.evalId ?? '',
  Name: ({ a }) => a.name ?? '',
  NodeID: ({ a }) => a.nodeId,
  NodeName: ({ state }) => state.node?.name ?? '',
  JobID: ({ a }) => a.jobId,
  JobType: ({ a }) => a.job.type,
  JobVersion: ({ a }) => a.jobVersion ?? 0,
  // The version the alloc runs, as its job's registration kept it.
  Job: ({ a, state }) => {
    const kept = state.versions.get(a.jobId)?.find((v) => v.version === (a.jobVersion ?? 0))?.apiJob ?? state.jobs.get(a.jobId)?.apiJob;
    return kept ? completeApiJob(kept) : null;
  },
  TaskGroup: ({ a }) => a.taskGroup,
  Resources: ({ legacy }) => legacy().total,
  TaskResources: ({ legacy }) => legacy().tasks,
  AllocatedResources: ({ a }) => resources(a),
  Services: () => null,
  Metrics: ({ s, state }) => (s.metrics ? apiAllocMetric(s.metrics, state.node?.nodePool ?? 'default') : null),
  DesiredStatus: ({ a }) => a.desiredStatus,
  DesiredDescription: ({ a }) => a.desiredDescription ?? '',
  DesiredTransition: ({ a }) => desiredTransition(a),
  ClientStatus: ({ a }) => a.clientStatus,
  ClientDescription: ({ a }) => a.clientDescription ?? '',
  TaskStates: ({ a }) => taskStates(a),
  DeploymentID: ({ a }) => a.deploymentId ?? '',
  DeploymentStatus: ({ s }) => deploymentStatus(s),
  FollowupEvalID: ({ a }) => a.followupEvalId ?? '',
  PreviousAllocation: ({ a }) => a.previousAllocation ?? '',
  NextAllocation: ({ s }) => s.nextAllocation ?? '',
  RescheduleTracker: ({ a }) => rescheduleTracker(a),
  NetworkStatus: () => null,
  PreemptedAllocations: ({ a }) => a.preemptedAllocations ?? null,
  PreemptedByAllocation: ({ s }) => s.preemptedBy ?? '',
  CreateIndex: ({ s }) => s.createIndex,
  ModifyIndex: ({ s }) => s.modifyIndex,
  AllocModifyIndex: ({ a }) => a.allocModifyIndex,
  CreateTime: ({ a }) => nanos(a.createTime),
  ModifyTime: ({ a }) => nanos(a.modifyTime),
} satisfies Record<string, (src: AllocSource) => unknown>;

/**
 * Nomad's `AllocationListStub`, in its order: no `DesiredTransition`, `DeploymentID` or
 * `PreviousAllocation` (those are the full allocation's), and the `JobType` and `JobVersion` the
 * full one has not.
 */
const allocStub = encoderOf(
  ALLOC_FIELDS,
  'ID EvalID Name Namespace NodeID NodeName JobID JobType JobVersion TaskGroup AllocatedResources DesiredStatus DesiredDescription ClientStatus ClientDescription TaskStates DeploymentStatus FollowupEvalID NextAllocation RescheduleTracker PreemptedAllocations PreemptedByAllocation CreateIndex ModifyIndex CreateTime ModifyTime',
);

/**
 * Nomad's `Allocation`, in its order: the job itself (the version it runs: the full allocation has
 * no `JobVersion`), and no `MigrateToken`, which Nomad's servers hand only to clients.
 */
const allocFull = encoderOf(
  ALLOC_FIELDS,
  'ID Namespace EvalID Name NodeID NodeName JobID Job TaskGroup Resources TaskResources AllocatedResources Services Metrics DesiredStatus DesiredDescription DesiredTransition ClientStatus ClientDescription TaskStates DeploymentID DeploymentStatus FollowupEvalID PreviousAllocation NextAllocation RescheduleTracker NetworkStatus PreemptedAllocations PreemptedByAllocation CreateIndex ModifyIndex AllocModifyIndex CreateTime ModifyTime',
);

/** The source of an allocation's fields. */
function allocSource(s: ServerAlloc, state: AgentState): AllocSource {
  let legacy: ReturnType<typeof legacyResources> | undefined;
  return { s, a: s.alloc, state, legacy: () => (legacy ??= legacyResources(s.alloc)) };
}

function desiredTransition(a: Allocation): Record<string, unknown> {
  const dt = a.desiredTransition;
  return {
    Migrate: dt?.migrate ?? null,
    Reschedule: dt?.reschedule ?? null,
    ForceReschedule: dt?.forceReschedule ?? null,
    NoShutdownDelay: dt?.noShutdownDelay ?? null,
    MigrateDisablePlacement: null,
  };
}

/** The stub `/v1/allocations`, `/v1/job/:id/allocations` and `/v1/evaluation/:id/allocations` list: Nomad's `AllocationListStub`. */
export function apiAllocStub(s: ServerAlloc, state: AgentState): Record<string, unknown> {
  return allocStub(allocSource(s, state));
}

/** One allocation in full (`/v1/allocation/:id`, `/v1/node/:id/allocations`): Nomad's `Allocation`. */
export function apiAlloc(s: ServerAlloc, state: AgentState): Record<string, unknown> {
  return allocFull(allocSource(s, state));
}

/** What an evaluation's API fields are made of besides the evaluation. */
interface EvalContext {
  state?: AgentState | undefined;
  related?: Evaluation[] | undefined;
}

/** How one field of an evaluation is filled. */
type EvalField = (e: Evaluation, context: EvalContext) => unknown;

/** Every field of Nomad's `Evaluation` and `EvaluationStub`, once: how berth fills it. */
const EVAL_FIELDS = {
  ID: (e) => e.id,
  Priority: (e) => e.priority,
  Type: (e) => e.type,
  TriggeredBy: (e) => e.triggeredBy,
  Namespace: (e) => e.namespace,
  JobID: (e) => e.jobId,
  JobModifyIndex: (e) => e.jobModifyIndex ?? 0,
  NodeID: (e) => e.nodeId ?? '',
  NodeModifyIndex: () => 0,
  DeploymentID: (e) => e.deploymentId ?? '',
  Status: (e) => e.status,
  StatusDescription: (e) => e.statusDescription ?? '',
  Wait: () => 0,
  WaitUntil: (e) => (e.waitUntil ? new Date(e.waitUntil).toISOString() : ZERO_TIME),
  NextEval: (e) => e.nextEval ?? '',
  PreviousEval: (e) => e.previousEval ?? '',
  BlockedEval: (e) => e.blockedEval ?? '',
  RelatedEvals: (_, { related }) => (related ? related.map(apiEvalStub) : null),
  FailedTGAllocs: (e) => (e.failedTgAllocs ? Object.fromEntries(Object.entries(e.failedTgAllocs).map(([g, f]) => [g, apiAllocMetric(f)])) : null),
  PlanAnnotations: (e, { state }) =>
    e.plan ? { DesiredTGUpdates: null, PreemptedAllocs: e.plan.preempted.length ? e.plan.preempted.map((p) => preemptedStub(p, state)) : null } : null,
  ClassEligibility: () => null,
  EscapedComputedClass: () => false,
  QuotaLimitReached: () => '',
  MissingNonNodeResources: () => null,
  AnnotatePlan: () => false,
  QueuedAllocations: (e) => e.queuedAllocations ?? null,
  SnapshotIndex: (e) => e.snapshotIndex ?? 0,
  CreateIndex: (e) => e.createIndex,
  ModifyIndex: (e) => e.modifyIndex,
  CreateTime: (e) => nanos(e.createTime),
  ModifyTime: (e) => nanos(e.modifyTime),
} satisfies Record<string, EvalField>;
const evalFields: Record<keyof typeof EVAL_FIELDS, EvalField> = EVAL_FIELDS; // each field as taking the context, which most leave out

/** Nomad's `Evaluation`, in its order. */
const evalFull = encoderOf(
  evalFields,
  'ID Priority Type TriggeredBy Namespace JobID JobModifyIndex NodeID NodeModifyIndex DeploymentID Status StatusDescription Wait WaitUntil NextEval PreviousEval BlockedEval RelatedEvals FailedTGAllocs PlanAnnotations ClassEligibility EscapedComputedClass QuotaLimitReached MissingNonNodeResources AnnotatePlan QueuedAllocations SnapshotIndex CreateIndex ModifyIndex CreateTime ModifyTime',
);

/** Nomad's `EvaluationStub`, in its order. */
const evalStub = encoderOf(
  evalFields,
  'ID Priority Type TriggeredBy Namespace JobID NodeID DeploymentID Status StatusDescription WaitUntil NextEval PreviousEval BlockedEval CreateIndex ModifyIndex CreateTime ModifyTime',
);

/** The stub of an alloc a plan evicted, with who evicted it; only its id when the state no longer holds it. */
function preemptedStub(p: { allocId: string; by: string }, state: AgentState | undefined): Record<string, unknown> {
  const s = state?.allocs.get(p.allocId);
  return s ? { ...apiAllocStub(s, state!), PreemptedByAllocation: p.by } : { ID: p.allocId, PreemptedByAllocation: p.by };
}

/**
 * An evaluation as Nomad's `Evaluation`. `PlanAnnotations.PreemptedAllocs` holds the stub of each
 * alloc the plan evicted (berth fills it so `job run` can print evictions); `RelatedEvals` is
 * filled only when asked (`?related=true`), as Nomad does.
 */
export function apiEval(e: Evaluation, state?: AgentState, related?: Evaluation[]): Record<string, unknown> {
  return evalFull(e, { state, related });
}

/** Nomad's `EvaluationStub` (an entry of `RelatedEvals`). */
export function apiEvalStub(e: Evaluation): Record<string, unknown> {
  return evalStub(e, {});
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

/** Nomad's `JobSummary` (`/v1/job/:id/summary`, and in each job stub): allocs per group and state, children per status. */
export function apiJobSummary(job: JobRecord, state: AgentState): Record<string, unknown> {
  const children = { Pending: 0, Running: 0, Dead: 0 };
  for (const c of state.jobs.values()) {
    if (c.apiJob.ParentID !== job.id) continue;
    const st = jobStatus(c, state);
    if (st === 'pending') children.Pending++;
    else if (st === 'running') children.Running++;
    else children.Dead++;
  }
  return {
    JobID: job.id,
    Namespace: job.namespace,
    Summary: jobSummary(job.id, state),
    Children: children,
    CreateIndex: job.createIndex,
    ModifyIndex: job.modifyIndex,
  };
}

/** Nomad's job status (kept with the state, which the server GC reads too). */
export { jobStatus };

/** The full job, with its live status. */
export function apiJob(job: JobRecord, state: AgentState): ApiJob {
  // Completed again: a job kept by an older berth has only the fields it was submitted with.
  return completeApiJob({ ...job.apiJob, Status: jobStatus(job, state), Stable: jobStable(job, state), ModifyIndex: job.modifyIndex });
}

/** Nomad's `Stable`: a deployment of this job version ended successful. */
export function jobStable(job: JobRecord, state: AgentState): boolean {
  return isStable(state, job.id, job.version);
}

/** A `/v1/jobs` entry: Nomad's `JobListStub` (which has no `Version`). */
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
    // Nomad's IsPeriodic and IsParameterized: a dispatched child is not itself parameterized.
    Periodic: !!j.Periodic,
    ParameterizedJob: !!j.ParameterizedJob && !j.Dispatched,
    Stop: job.stop,
    Status: jobStatus(job, state),
    StatusDescription: '',
    JobSummary: apiJobSummary(job, state),
    CreateIndex: job.createIndex,
    ModifyIndex: job.modifyIndex,
    JobModifyIndex: job.jobModifyIndex,
    SubmitTime: nanos(job.submitTime),
  };
}

/** Nomad's `NodeResources`: what the node offers, with its dynamic port range. */
function nodeResources(n: NodeRecord): Record<string, unknown> {
  return {
    Cpu: { CpuShares: n.cpuMHz, TotalCpuCores: n.cores, ReservableCpuCores: Array.from({ length: n.cores }, (_, i) => i) },
    Memory: { MemoryMB: n.memoryMB },
    Disk: { DiskMB: n.diskMB },
    Networks: null,
    Devices: null,
    MinDynamicPort: n.minDynamicPort ?? DEFAULT_MIN_DYNAMIC_PORT,
    MaxDynamicPort: n.maxDynamicPort ?? DEFAULT_MAX_DYNAMIC_PORT,
  };
}

/** Nomad's `NodeReservedResources`: the `client { reserved }` block, host ports as written. */
function reservedResources(n: NodeRecord): Record<string, unknown> {
  return {
    Cpu: { CpuShares: n.reserved.cpu },
    Memory: { MemoryMB: n.reserved.memoryMB },
    Disk: { DiskMB: n.reserved.diskMB },
    Networks: { ReservedHostPorts: n.reservedPorts ?? '' },
  };
}

function drivers(n: NodeRecord, names: string[]): Record<string, unknown> {
  const updated = rfc(n.driversUpdatedAt ?? n.statusUpdatedAt);
  const info = (f: { detected: boolean; healthy: boolean; healthDescription: string; attributes: Record<string, string> }) => ({
    Attributes: f.attributes,
    Detected: f.detected,
    Healthy: f.healthy,
    HealthDescription: f.healthDescription,
    UpdateTime: updated,
  });
  return n.driverHealth
    ? Object.fromEntries(Object.entries(n.driverHealth).map(([d, f]) => [d, info(f)]))
    : Object.fromEntries(names.map((d) => [d, info({ detected: true, healthy: true, healthDescription: 'Healthy', attributes: {} })]));
}

/** The node, in full (`/v1/node/:id`): Nomad's `Node`. */
export function apiNode(n: NodeRecord, driverNames: string[]): Record<string, unknown> {
  return {
    ID: n.id,
    Datacenter: n.datacenter,
    Name: n.name,
    HTTPAddr: n.httpAddr,
    TLSEnabled: n.tlsEnabled,
    Attributes: n.attributes ?? {
      'kernel.name': 'linux',
      'cpu.totalcompute': String(n.cpuMHz),
      'memory.totalbytes': String(n.memoryMB * 1024 * 1024),
    },
    Resources: null,
    Reserved: null,
    NodeResources: nodeResources(n),
    ReservedResources: reservedResources(n),
    Links: null,
    Meta: n.meta ?? {},
    NodeClass: n.nodeClass ?? '',
    NodePool: n.nodePool ?? 'default',
    CgroupParent: '',
    Drain: false,
    DrainStrategy: null,
    SchedulingEligibility: 'eligible',
    Status: n.status,
    StatusDescription: '',
    StatusUpdatedAt: Math.floor((n.statusUpdatedAt ?? 0) / 1000),
    Events: [],
    Drivers: drivers(n, driverNames),
    HostVolumes: {},
    GCVolumesOnNodeGC: false,
    HostNetworks: {},
    CSIControllerPlugins: null,
    CSINodePlugins: null,
    LastDrain: null,
    CreateIndex: n.createIndex,
    ModifyIndex: n.modifyIndex,
    NodeMaxAllocs: 0,
  };
}

/** What `/v1/nodes` adds to each stub when asked: `?resources=true`, `?os=true`. */
export interface NodeStubFields {
  resources?: boolean;
  os?: boolean;
}

/**
 * A `/v1/nodes` entry: Nomad's `NodeListStub`. `Address` is the HTTP address's host; `Version`
 * the `nomad.version` attribute. With `resources` it carries `NodeResources` and
 * `ReservedResources`; with `os`, `Attributes` holding `os.name` (all Nomad's servers put there).
 */
export function apiNodeStub(n: NodeRecord, driverNames: string[], fields: NodeStubFields = {}): Record<string, unknown> {
  return {
    Address: n.httpAddr.replace(/:\d+$/, '').replace(/^\[|\]$/g, ''),
    ID: n.id,
    ...(fields.os ? { Attributes: { 'os.name': n.attributes?.['os.name'] ?? '' } } : {}),
    Datacenter: n.datacenter,
    Name: n.name,
    NodeClass: n.nodeClass ?? '',
    NodePool: n.nodePool ?? 'default',
    Version: n.attributes?.['nomad.version'] ?? NOMAD_API_VERSION,
    Drain: false,
    SchedulingEligibility: 'eligible',
    Status: n.status,
    StatusDescription: '',
    Drivers: drivers(n, driverNames),
    ...(fields.resources ? { NodeResources: nodeResources(n), ReservedResources: reservedResources(n) } : {}),
    LastDrain: null,
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
    // Both the job's indexes at the deployment's making: one register sets them alike.
    JobModifyIndex: d.jobModifyIndex,
    JobSpecModifyIndex: d.jobModifyIndex,
    JobCreateIndex: d.jobCreateIndex,
    IsMultiregion: false,
    TaskGroups: Object.fromEntries(
      Object.entries(d.taskGroups).map(([g, t]) => [
        g,
        {
          PlacedCanaries: t.placedCanaries?.length ? t.placedCanaries : null,
          AutoRevert: t.autoRevert ?? false,
          ProgressDeadline: t.progressDeadlineMs * 1e6,
          RequireProgressBy: rfc(t.requireProgressBy),
          Promoted: t.promoted ?? false,
          DesiredCanaries: t.desiredCanaries ?? 0,
          DesiredTotal: t.desiredTotal,
          PlacedAllocs: t.placedAllocs,
          HealthyAllocs: t.healthyAllocs,
          UnhealthyAllocs: t.unhealthyAllocs,
        },
      ]),
    ),
    Status: d.status,
    StatusDescription: d.statusDescription,
    CreateIndex: d.createIndex,
    ModifyIndex: d.modifyIndex,
    CreateTime: nanos(d.createTime),
    ModifyTime: nanos(d.modifyTime),
  };
}

/** `/v1/operator/scheduler/configuration`'s `SchedulerConfig`. */
export function apiSchedulerConfig(c: SchedulerConfig): Record<string, unknown> {
  return {
    SchedulerAlgorithm: 'binpack',
    MemoryOversubscriptionEnabled: false,
    RejectJobRegistration: false,
    PauseEvalBroker: false,
    // Unset: Nomad's scheduler then considers up to 100 nodes (berth has one).
    NodeLimitForFeasibilityChecks: 0,
    PreemptionConfig: Object.fromEntries(PREEMPTION_KEYS.map((k) => [k.api, c.preemption[k.field]])),
    CreateIndex: c.createIndex,
    ModifyIndex: c.modifyIndex,
  };
}
