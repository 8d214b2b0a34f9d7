/**
 * The scheduler's input and output: the node it places on, the scheduler configuration, the
 * evaluation it processes and the plan it returns. Plain data, camelCase, times in ms since the
 * epoch, durations in ms, as everywhere in berth's model. Field names follow Nomad's API
 * (`Evaluation`, `AllocMetric`, `SchedulerConfiguration`, `DesiredUpdates`) one for one.
 * @module
 */
import type { Allocation, Job } from '../../index.ts';

/** The one node berth's scheduler places on. The agent reads the numbers; the scheduler only adds them up. */
export interface SchedulerNode {
  id: string;
  name?: string;
  /** Default `dc1`. */
  datacenter?: string;
  /** What the node has (Nomad's `NodeResources`). */
  resources: NodeResources;
  /** What the scheduler must leave alone (Nomad's client `reserved` block). */
  reserved?: ReservedResources;
  /** Nomad's `min_dynamic_port` / `max_dynamic_port`; default 20000-32000. */
  minDynamicPort?: number;
  maxDynamicPort?: number;
  /**
   * Ports something on the host holds now (a listener, a bound UDP socket): never picked as a
   * dynamic port. A static port is the job's to ask for (it may be a stopping alloc's), so it is
   * not checked against these.
   */
  portsInUse?: number[];
  /** The address allocated ports are bound on (Nomad's node network address). Default `127.0.0.1`. */
  hostIp?: string;
  /** The node's fingerprinted attributes (`kernel.name`, `driver.raw_exec`, ...): `${attr.*}` in constraints. */
  attributes?: Record<string, string>;
  /** The client's `meta` block: `${meta.*}`. */
  meta?: Record<string, string>;
  /** Nomad's `node_class` (`${node.class}`; also the key of `ClassFiltered`). Default empty. */
  nodeClass?: string;
  /** Nomad's `node_pool` (`${node.pool}`). Default `default`. */
  nodePool?: string;
  /** Drivers detected and healthy; a group with another driver is infeasible. Default: any driver. */
  drivers?: string[];
}

/** A node's totals. `cpu_total_compute` / `memory_total_mb` overrides are just these numbers. */
export interface NodeResources {
  /** Total CPU in MHz (cores × MHz per core, or `cpu_total_compute`). */
  cpuMHz: number;
  /** Total memory in MB (or `memory_total_mb`). */
  memoryMB: number;
  /** Disk for allocations in MB. */
  diskMB: number;
  /** Number of CPU cores; core ids are 0..cores-1. Default 1. */
  cores?: number;
}

/** Nomad's client `reserved` block. */
export interface ReservedResources {
  cpuMHz?: number;
  memoryMB?: number;
  diskMB?: number;
  /** Core ids no task may be pinned to (Nomad's `reserved.cores`). */
  cores?: number[];
  /** Host ports no alloc may take (Nomad's `reserved.reserved_ports`). */
  ports?: number[];
}

/** Nomad's `PreemptionConfig`: preemption per scheduler type. */
export interface PreemptionConfig {
  systemSchedulerEnabled: boolean;
  sysbatchSchedulerEnabled: boolean;
  batchSchedulerEnabled: boolean;
  serviceSchedulerEnabled: boolean;
}

/** Nomad's `SchedulerConfiguration` (the parts one node uses). */
export interface SchedulerConfiguration {
  preemptionConfig: PreemptionConfig;
  /** Give tasks their `memory_max` (Nomad's memory oversubscription). Default false. */
  memoryOversubscriptionEnabled?: boolean;
}

/** Nomad's `EvalTrigger*` values. */
export type EvalTrigger =
  | 'job-register'
  | 'job-deregister'
  | 'periodic-job'
  | 'node-update'
  | 'node-drain'
  | 'alloc-stop'
  | 'scheduled'
  | 'rolling-update'
  | 'deployment-watcher'
  | 'failed-follow-up'
  | 'alloc-failure'
  | 'queued-allocs'
  | 'preemption'
  | 'job-scaling'
  | 'job-eval'
  | 'alloc-reschedule';

/** Nomad's `EvalStatus*` values. */
export type EvalStatus = 'pending' | 'blocked' | 'complete' | 'failed' | 'canceled';

/** Nomad's `Evaluation`: one reason to run the scheduler for a job, kept for the agent to show. */
export interface Evaluation {
  id: string;
  /** Default `default`. */
  namespace?: string;
  /** The job's priority when the eval was made. */
  priority: number;
  /** The job's scheduler type. */
  type: Job['type'];
  triggeredBy: EvalTrigger;
  jobId: string;
  /** The job version the eval was made for. */
  jobVersion?: number;
  status: EvalStatus;
  statusDescription?: string;
  /** Do not process before this time (a delayed reschedule), ms since the epoch. */
  waitUntil?: number;
  /** The node whose update made the eval (`node-update`). */
  nodeId?: string;
  /** The eval this one follows (blocked and follow-up evals). */
  previousEval?: string;
  /** The follow-up eval this one created. */
  nextEval?: string;
  /** The blocked eval this one created for what it could not place. */
  blockedEval?: string;
  /** Per group: why placements failed. */
  failedTgAllocs?: Record<string, AllocMetric>;
  /** Per group: how many allocs are still waiting for room. */
  queuedAllocations?: Record<string, number>;
  createTime: number;
  modifyTime: number;
}

/** Nomad's `AllocMetric`, as it reports a failed placement (`nomad job status`, `FailedTGAllocs`). */
export interface AllocMetric {
  nodesEvaluated: number;
  nodesFiltered: number;
  /** Ready nodes per datacenter. */
  nodesAvailable: Record<string, number>;
  nodesExhausted: number;
  /** Why the node was full, per dimension: `cpu`, `memory`, `disk`, `cores`, `network: ...`. */
  dimensionExhausted: Record<string, number>;
  /** More allocs of the same group that failed the same way. */
  coalescedFailures: number;
  /** Nodes filtered per node class (classes other than empty). */
  classFiltered?: Record<string, number>;
  /** Nodes filtered per reason: a constraint's `<ltarget> <op> <rtarget>`, `missing drivers`, `distinct_hosts`, ... */
  constraintFiltered?: Record<string, number>;
  /** Nodes exhausted per node class. */
  classExhausted?: Record<string, number>;
  /** Per task: the cpu (MHz) and memory (MB) asked for in the exhausted dimensions. */
  resourcesExhausted?: Record<string, { cpu: number; memoryMB: number }>;
  /** The node's scores for this placement, by scorer (`binpack`, `job-anti-affinity`, ...), and their mean. */
  scoreMetaData?: Array<{ nodeId: string; scores: Record<string, number>; normScore: number }>;
  /** Time spent placing, in ms (0 unless the scheduler was handed a clock). */
  allocationTimeMs?: number;
}

/** Nomad's `DesiredUpdates`: what the plan does to one group (what `nomad job plan` shows). */
export interface DesiredUpdates {
  ignore: number;
  place: number;
  migrate: number;
  stop: number;
  inPlaceUpdate: number;
  destructiveUpdate: number;
  preemptions: number;
  rescheduleNow: number;
  rescheduleLater: number;
  /** Canaries placed by this plan (Nomad's `DesiredUpdates.Canary`). */
  canary: number;
}

/**
 * One group's deployment in this plan: a first run of a version (every alloc placed at once) or a
 * rolling update (at most `maxParallel` destructive replacements in flight); the agent's
 * deployment watcher runs the scheduler again (trigger `deployment-watcher`) when a batch is healthy.
 */
export interface DeploymentBatch {
  maxParallel: number;
  /** The group's count: how many allocs of this version the deployment waits to see healthy. */
  desiredTotal: number;
  /** Allocs replaced by this plan. */
  replaced: number;
  /** Allocs that still run an older version and wait for a later batch. */
  remaining: number;
  /** Replacements of the current version not yet healthy (they hold the batch). */
  inFlight: number;
  /** An alloc of the current version was reported unhealthy: the rollout stops here. */
  failed: boolean;
  /** `update.canary`: canaries the version places beside the old allocs before it is promoted (0: none). */
  desiredCanaries: number;
  /** The group's canaries were promoted (or it has none to promote). */
  promoted: boolean;
}

/**
 * A group's canaries in the deployment of the eval's job version (Nomad's `DeploymentState`
 * parts the reconciler reads): the ids of the canaries placed so far, and whether they were promoted.
 */
export interface CanaryState {
  desiredCanaries: number;
  placedCanaries: readonly string[];
  promoted: boolean;
  /** The deployment failed: its canaries never promoted stop. */
  failed?: boolean;
}

/** What {@link schedule} needs. Everything is data; nothing is read from the outside world. */
export interface ScheduleInput {
  node: SchedulerNode;
  /** Every job the node knows (the eval's job, if it still exists, among them). */
  jobs: Job[];
  /** Every alloc on the node, of every job, in any state. */
  allocs: Allocation[];
  /** Default: Nomad's (preemption on for system jobs only). */
  config?: SchedulerConfiguration;
  /** The evaluation being processed. */
  eval: Evaluation;
  /** The time of the plan, ms since the epoch. */
  now: number;
  /** Makes ids for new allocs and evals (a UUID generator in the agent, a counter in specs). */
  newId: () => string;
  /**
   * A number in [0, 1) for dynamic port choice: Nomad picks at random within the range (the agent
   * hands in `Math.random`, a spec a seeded source). Default: the lowest free port.
   */
  random?: () => number;
  /** The `allocModifyIndex` the plan's allocs carry. Default: one more than the highest given. */
  index?: number;
  /**
   * Rollouts the operator paused or failed, as `<jobId>@<version>`: no destructive replacement
   * toward that job version is placed until it is resumed (or a new version is submitted).
   */
  heldRollouts?: readonly string[];
  /**
   * The canaries of each group in the deployment under way for a job version, keyed
   * `<jobId>@<version>`, then by group: which are canaries, and whether they were promoted.
   */
  canaries?: Readonly<Record<string, Record<string, CanaryState>>>;
  /** A monotonic clock in ms (`performance.now`), for `AllocationTime`. Default: none (times are 0). */
  elapsed?: () => number;
}

/** What the scheduler decided. The agent applies it to its store and hands allocs to the client. */
export interface Plan {
  /** The processed eval, with its final status, `blockedEval`, `queuedAllocations`, `failedTgAllocs`. */
  eval: Evaluation;
  /** New allocs to run (replacements carry `previousAllocation`, reschedules `rescheduleTracker`). */
  place: Allocation[];
  /** Allocs to stop: desired status `stop`, with Nomad's `desiredDescription`. */
  stop: Allocation[];
  /** Allocs evicted for a placement: desired status `evict`, "Preempted by alloc ID <id>". */
  preempt: Allocation[];
  /** Allocs updated in place: the new job version, same resources and ports. */
  inPlace: Allocation[];
  /** Allocs whose server fields changed without a status change (a `followupEvalId`). */
  attributeUpdates: Allocation[];
  /** Evals to store: the blocked eval, delayed reschedules, evals for preempted jobs. */
  evals: Evaluation[];
  /** Per group: allocs not placed now (they wait in the blocked eval). */
  queued: Record<string, number>;
  /** Per group: why placements failed. */
  failedTgAllocs: Record<string, AllocMetric>;
  /** Per group: what the plan does. */
  desiredTgUpdates: Record<string, DesiredUpdates>;
  /** Per group with an `update` block whose version needs a deployment (a first run, a spec change): its progress. */
  deployment: Record<string, DeploymentBatch>;
  /** Per placed alloc id: how it was placed (Nomad's `Allocation.Metrics`). */
  metrics: Record<string, AllocMetric>;
}
