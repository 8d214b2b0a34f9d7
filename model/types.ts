/**
 * berth's plain-data model (docs/allocation.md). Everything here is JSON-serialisable and
 * camelCase; times are milliseconds since the epoch, durations are milliseconds.
 * @module
 */

/** What the servers want for an allocation. */
export type DesiredStatus = 'run' | 'stop' | 'evict';

/** What the client reports about an allocation. */
export type ClientStatus = 'pending' | 'running' | 'complete' | 'failed' | 'lost' | 'unknown';

/** The server's view of an allocation, plus the client-owned fields. */
export interface Allocation {
  /** 36-character UUID. */
  id: string;
  /** Default 'default'. */
  namespace?: string;
  nodeId: string;
  jobId: string;
  job: Job;
  /** Name of a group in `job.taskGroups`. */
  taskGroup: string;
  desiredStatus: DesiredStatus;
  clientStatus: ClientStatus;
  clientDescription?: string;
  /** The allocation this one replaces (it may need its data). */
  previousAllocation?: string;
  /** Allocations evicted to make room for this one. */
  preemptedAllocations?: string[];
  /**
   * The token this alloc's client presents to the node holding `previousAllocation` for its data
   * (Nomad's `MigrateToken`: the servers set it, with ACLs on, when the previous alloc is on
   * another node). It takes the place of the client's `migrateToken` for this alloc.
   */
  migrateToken?: string;
  /** Server-side version; higher is newer. */
  allocModifyIndex: number;
  createTime?: number;
  taskStates?: Record<string, TaskState>;
  /** Nomad's `<job>.<group>[<index>]`; `NOMAD_ALLOC_INDEX` comes from it. */
  name?: string;
  /** What the servers ask of this alloc beyond its desired status (Nomad's `DesiredTransition`). */
  desiredTransition?: DesiredTransition;
  /** The evaluation that placed this alloc (Nomad's `EvalID`). */
  evalId?: string;
  /** The job version this alloc runs (Nomad's `Job.Version` at placement). */
  jobVersion?: number;
  /** Why the servers want this desired status; "Preempted by alloc ID <id>" for an evicted alloc. */
  desiredDescription?: string;
  /** The deployment this alloc belongs to. */
  deploymentId?: string;
  /** The alloc's health as the deployment sees it (set once by the health tracker). */
  deploymentStatus?: AllocDeploymentStatus;
  /** Earlier reschedules of the allocs this one replaces. */
  rescheduleTracker?: RescheduleTracker;
  /** The evaluation that will reschedule this alloc later (a delayed reschedule). */
  followupEvalId?: string;
  /** What the scheduler gave the alloc (ports, cpu, memory, disk). */
  allocatedResources?: AllocatedResources;
  /** Last server-side change, ms since the epoch. */
  modifyTime?: number;
}

/** Nomad's `AllocDeploymentStatus`: the alloc's health within its deployment. */
export interface AllocDeploymentStatus {
  /** Unset until the health tracker decides. */
  healthy?: boolean;
  /** When health was decided, ms since the epoch. */
  timestamp?: number;
  /** The alloc is a canary of its deployment. */
  canary?: boolean;
}

/** One earlier reschedule, as Nomad's `RescheduleEvent`. */
export interface RescheduleEvent {
  /** When the reschedule happened, ms since the epoch. */
  rescheduleTime: number;
  prevAllocId: string;
  prevNodeId: string;
  /** The delay applied before this reschedule, in ms. */
  delayMs: number;
}

/** Nomad's `RescheduleTracker`: every reschedule that led to this alloc. */
export interface RescheduleTracker {
  events: RescheduleEvent[];
}

/** Resources one task was given (Nomad's `AllocatedTaskResources`, flattened). */
export interface AllocatedTaskResources {
  /** CPU in MHz. */
  cpu: number;
  memoryMB: number;
  memoryMaxMB?: number;
  /** The CPU core ids reserved for the task. */
  cores?: number[];
}

/** What the scheduler gave an alloc (Nomad's `AllocatedResources`). */
export interface AllocatedResources {
  /** Per task name. */
  tasks: Record<string, AllocatedTaskResources>;
  /** Resources shared by the group: ephemeral disk and the group network's ports. */
  shared: { diskMB: number; ports: AllocatedPort[] };
}

/** A port the scheduler chose (Nomad's `AllocatedPortMapping`). */
export interface AllocatedPort {
  /** The port's label in the group's `network` block. */
  label: string;
  /** The host port. */
  value: number;
  /** The port inside the task's network (same as `value` in host mode unless `to` is set). */
  to: number;
  /** The host address the port is bound on. */
  hostIp: string;
}

/** One entry of the client's Nomad-native service catalog (Nomad's `ServiceRegistration`). */
export interface ServiceRegistration {
  id: string;
  serviceName: string;
  namespace: string;
  nodeId: string;
  datacenter: string;
  jobId: string;
  allocId: string;
  tags: string[];
  address: string;
  port: number;
  createIndex?: number;
  modifyIndex?: number;
}

/**
 * The latest result of one Nomad-provider service check of an alloc (what Nomad's client serves
 * at `/v1/client/allocation/<id>/checks`). `status` is berth's (Consul's) word; `pending` is true
 * until the check has been run once.
 */
export interface CheckResult {
  allocId: string;
  group: string;
  /** The task of a task service (or the task a group service's script check runs in). */
  task?: string;
  service: string;
  check: string;
  status: 'passing' | 'warning' | 'critical';
  pending: boolean;
  output: string;
  /** An HTTP check's answer status. */
  statusCode?: number;
  /** When the status was last set, ms since the epoch. */
  timestamp: number;
}

/** Nomad's `DesiredTransition`; only `noShutdownDelay` changes what the client does. */
export interface DesiredTransition {
  migrate?: boolean;
  reschedule?: boolean;
  forceReschedule?: boolean;
  /** Skip every group and task `shutdown_delay` when stopping (Nomad's `-no-shutdown-delay`). */
  noShutdownDelay?: boolean;
}

/** Nomad's group `disconnect` block: what happens while the client is out of touch. */
export interface Disconnect {
  /** Servers mark the alloc `unknown` (not `lost`) for this long (Nomad's `lost_after`). */
  lostAfterMs?: number;
  /** The client stops the alloc itself after this long without a server heartbeat. */
  stopOnClientAfterMs?: number;
  /** Servers place a replacement while the alloc is unknown. */
  replace?: boolean;
  /** Which alloc wins on reconnect: 'best_score' | 'keep_original' | 'keep_replacement' | 'longest_running'. */
  reconcile?: string;
}

/** A job: what the allocation's task group comes from. */
export interface Job {
  id: string;
  name?: string;
  namespace?: string;
  type: 'service' | 'batch' | 'system' | 'sysbatch';
  priority?: number;
  taskGroups: TaskGroup[];
  /** The region the job runs in (`NOMAD_REGION`). */
  region?: string;
  /** Datacenters the job may run in. */
  datacenters?: string[];
  /** Job meta; merged with group and task meta into `NOMAD_META_*`. */
  meta?: Record<string, string>;
  /** Nomad's `Job.Version` (0 for the first registration). */
  version?: number;
  /** The parent job of a dispatched or periodic child (`NOMAD_JOB_PARENT_ID`). */
  parentId?: string;
  /** The job was stopped (Nomad's `Job.Stop`). */
  stop?: boolean;
  /** Job-level update defaults; canonicalisation merges them into each group's `update`. */
  update?: UpdateStrategy;
  /** When this version was submitted, ms since the epoch. */
  submitTime?: number;
  /** Job-level `constraint` blocks: every one must hold on the node for any alloc of the job. */
  constraints?: Constraint[];
  /** Job-level `affinity` blocks (scored; on one node they never block placement). */
  affinities?: Affinity[];
  /** Job-level `spread` blocks (scored; on one node they never block placement). */
  spreads?: Spread[];
  /**
   * Nomad's `parameterized` block: the job is a template that runs only when dispatched (each
   * dispatch registers a child job with its payload and meta); never placed itself.
   */
  parameterized?: ParameterizedJob;
  /** A dispatched child's payload, base64 (Nomad's `Job.Payload`); tasks take it with `dispatchPayload`. */
  payload?: string;
  /** The job is a dispatched child of a parameterized job. */
  dispatched?: boolean;
  /**
   * Nomad's `periodic` block: the job is launched on a cron schedule (each launch registers a
   * child job `<id>/periodic-<unix>`); never placed itself.
   */
  periodic?: PeriodicConfig;
}

/** Nomad's `periodic` block (API `PeriodicConfig`). */
export interface PeriodicConfig {
  /** Launches happen only while enabled (Nomad's default: true). */
  enabled?: boolean;
  /** A cron expression (Nomad's `cron`). */
  spec?: string;
  /** Several cron expressions, the earliest next launch of any (Nomad's `crons`). */
  specs?: string[];
  /** Always `cron`. */
  specType?: 'cron';
  /** A launch is skipped while an earlier child of the job still runs. */
  prohibitOverlap?: boolean;
  /** The IANA zone the expressions are read in (default UTC). */
  timeZone?: string;
}

/** Nomad's `parameterized` block (API `ParameterizedJobConfig`). */
export interface ParameterizedJob {
  /** Whether a dispatch must, may or must not carry a payload (Nomad's default: optional). */
  payload?: 'optional' | 'required' | 'forbidden';
  /** Meta keys every dispatch must give. */
  metaRequired?: string[];
  /** Meta keys a dispatch may give (and no others beside the required ones). */
  metaOptional?: string[];
}

/**
 * Nomad's `constraint` block (API `Constraint`): `lTarget` and `rTarget` are literals or
 * `${attr.*}`, `${meta.*}`, `${node.*}` references; `operand` is one of Nomad's operators
 * (`=`, `!=`, `<`, `regexp`, `version`, `semver`, `set_contains`, `is_set`, `distinct_hosts`, ...).
 */
export interface Constraint {
  lTarget?: string;
  rTarget?: string;
  operand: string;
}

/** Nomad's `affinity` block: a constraint that adds `weight` (-100..100) to a node's score when it holds. */
export interface Affinity {
  lTarget?: string;
  rTarget?: string;
  operand: string;
  weight?: number;
}

/** Nomad's `spread` block: spread allocs over the values of `attribute`, with target percentages. */
export interface Spread {
  attribute: string;
  weight?: number;
  spreadTarget?: Array<{ value: string; percent?: number }>;
}

/** A group of tasks placed together. */
export interface TaskGroup {
  name: string;
  count?: number;
  tasks: Task[];
  ephemeralDisk?: { sticky?: boolean; migrate?: boolean; sizeMB?: number };
  restartPolicy?: RestartPolicy;
  /** Group meta; overrides job meta, overridden by task meta. */
  meta?: Record<string, string>;
  /** Nomad's group `shutdown_delay`, in ms. */
  shutdownDelayMs?: number;
  /** Nomad's `max_run_duration` (batch and sysbatch jobs only), in ms from the alloc's createTime. */
  maxRunDurationMs?: number;
  /** Nomad's `disconnect` block. */
  disconnect?: Disconnect;
  /** Nomad's deprecated `max_client_disconnect` (the old `disconnect.lost_after`), in ms. */
  maxClientDisconnectMs?: number;
  /** Nomad's group `reschedule` block: how failed allocs are replaced. */
  reschedulePolicy?: ReschedulePolicy;
  /** Nomad's group `migrate` block: how allocs move off a draining node. */
  migrate?: MigrateStrategy;
  /** Nomad's `update` block (the job's, merged with the group's). */
  update?: UpdateStrategy;
  /** The group's `network` blocks (host mode only). */
  networks?: NetworkResource[];
  /** Group-level `service` blocks. */
  services?: Service[];
  /** Group-level `constraint` blocks. */
  constraints?: Constraint[];
  /** Group-level `affinity` blocks. */
  affinities?: Affinity[];
  /** Group-level `spread` blocks. */
  spreads?: Spread[];
}

/** Nomad's `reschedule` block, with durations in milliseconds. */
export interface ReschedulePolicy {
  /** Reschedules allowed within `intervalMs` (ignored when `unlimited`). */
  attempts: number;
  intervalMs: number;
  /** Delay before the first reschedule. */
  delayMs: number;
  /** How the delay grows between reschedules. */
  delayFunction: 'constant' | 'exponential' | 'fibonacci';
  /** Upper bound of the growing delay. */
  maxDelayMs: number;
  unlimited: boolean;
}

/** Nomad's `migrate` block, with durations in milliseconds. */
export interface MigrateStrategy {
  maxParallel: number;
  healthCheck: 'checks' | 'task_states';
  minHealthyTimeMs: number;
  healthyDeadlineMs: number;
}

/** Nomad's `update` block, with durations in milliseconds. */
export interface UpdateStrategy {
  /** Allocs replaced at once; 0 disables rolling updates. */
  maxParallel: number;
  healthCheck: 'checks' | 'task_states' | 'manual';
  minHealthyTimeMs: number;
  healthyDeadlineMs: number;
  progressDeadlineMs: number;
  autoRevert: boolean;
  autoPromote: boolean;
  canary: number;
  staggerMs: number;
}

/** A group `network` block; berth supports host networking only. */
export interface NetworkResource {
  mode: 'host';
  /** Ports with a `static` host port. */
  reservedPorts: Port[];
  /** Ports whose host port the scheduler picks. */
  dynamicPorts: Port[];
}

/** A `port "<label>"` block. */
export interface Port {
  label: string;
  /** The host port (`static`), or the one chosen for a dynamic port. */
  value?: number;
  /** The port the task listens on, when it differs from the host port. */
  to?: number;
  /** The client `host_network` to take the address from. */
  hostNetwork?: string;
}

/** A task `artifact` block: a file fetched into the task dir before it starts. */
export interface Artifact {
  /** go-getter style URL (http, https or file). */
  source: string;
  /** Relative to the task dir; default `local/`. */
  destination?: string;
  mode?: 'any' | 'file' | 'dir';
  /** go-getter options (`checksum`, `archive`). */
  options?: Record<string, string>;
  /** HTTP request headers. */
  headers?: Record<string, string>;
}

/** A `service` block registered in Nomad's native service catalog. */
export interface Service {
  name: string;
  /** A port label from the group's network (or a number as text). */
  portLabel?: string;
  tags?: string[];
  meta?: Record<string, string>;
  addressMode?: 'auto' | 'host' | 'driver' | 'alloc';
  /** An explicit address, overriding the one `addressMode` picks. */
  address?: string;
  /** Only Nomad's own catalog is supported. */
  provider?: 'nomad';
  /** For a group service: the task it belongs to (needed by script checks). */
  taskName?: string;
  checks?: ServiceCheck[];
}

/** A service's `check` block, with durations in milliseconds. */
export interface ServiceCheck {
  name?: string;
  type: 'http' | 'tcp' | 'script';
  /** HTTP path (http checks). */
  path?: string;
  method?: string;
  header?: Record<string, string[]>;
  protocol?: 'http' | 'https';
  /** Port label to check, when not the service's own. */
  portLabel?: string;
  /** Command of a script check, run inside the task. */
  command?: string;
  args?: string[];
  /** For a group service's script check: the task to run it in. */
  task?: string;
  intervalMs: number;
  timeoutMs: number;
  initialStatus?: 'passing' | 'warning' | 'critical';
  successBeforePassing?: number;
  failuresBeforeCritical?: number;
  /** Nomad's `check_restart`: restart the task after `limit` failures. */
  checkRestart?: CheckRestart;
}

/** Nomad's `check_restart` block, with durations in milliseconds. */
export interface CheckRestart {
  /** Consecutive failing checks before a restart; 0 disables. */
  limit: number;
  /** Time after a task (re)start during which failures are ignored. */
  graceMs: number;
  /** Treat `warning` as passing. */
  ignoreWarnings: boolean;
}

/** Lifecycle hook a task is attached to. */
export type LifecycleHook = 'prestart' | 'poststart' | 'poststop';

/** One task of a group. */
export interface Task {
  name: string;
  driver: string;
  config: Record<string, unknown>;
  env?: Record<string, string>;
  user?: string;
  leader?: boolean;
  lifecycle?: { hook: LifecycleHook; sidecar?: boolean };
  killTimeoutMs?: number;
  killSignal?: string;
  restartPolicy?: RestartPolicy;
  logs?: { maxFiles: number; maxFileSizeMB: number };
  /** Task meta; overrides group and job meta in `NOMAD_META_*`. */
  meta?: Record<string, string>;
  /** What the task may use (Nomad's task `resources`). */
  resources?: Resources;
  /** Nomad's task `shutdown_delay`, in ms. */
  shutdownDelayMs?: number;
  /** Files fetched into the task dir before the task starts. */
  artifacts?: Artifact[];
  /** Task-level `service` blocks. */
  services?: Service[];
  /** Task-level `constraint` blocks (they apply to the task's group). */
  constraints?: Constraint[];
  /** Task-level `affinity` blocks. */
  affinities?: Affinity[];
  /** Nomad's `dispatch_payload { file }`: a dispatched job's payload written to `local/<file>` before the task starts. */
  dispatchPayload?: { file: string };
  /** Nomad's `template` blocks: files (or env vars) rendered into the task dir before the task starts. */
  templates?: TaskTemplate[];
}

/** Nomad's `change_script`: run in the task on a re-render; a failure kills it with `failOnError`. */
export interface TemplateChangeScript {
  command: string;
  args?: string[];
  /** Bound on the script (default 5 s, Nomad's). */
  timeoutMs?: number;
  failOnError?: boolean;
}

/** One `template` block (API `Template`), rendered with Go's text/template and consul-template's functions. */
export interface TaskTemplate {
  /** The template text (Nomad's `data`). */
  data?: string;
  /** A file in the task dir holding the template text instead (an artifact, say). */
  source?: string;
  /** Where the result goes, relative to the task dir. */
  destination: string;
  /** What a re-render does: `restart` (default), `signal` (`changeSignal`), `script` (`changeScript`), `noop`. */
  changeMode?: 'restart' | 'signal' | 'noop' | 'script';
  changeSignal?: string;
  /** The command a `script` change runs inside the task (Nomad's `change_script`). */
  changeScript?: TemplateChangeScript;
  /** Quiescence: a change waits `minMs` for no further change, at most `maxMs` (Nomad's `wait`). */
  wait?: { minMs?: number; maxMs?: number };
  /** Owner of the rendered file (default: the task's user for exec, berth's own for raw_exec). */
  uid?: number;
  gid?: number;
  /** Nomad's `splay`, ms. */
  splayMs?: number;
  /** The file's mode, octal (default "0644"). */
  perms?: string;
  /** The result's `KEY=value` lines become the task's environment. */
  env?: boolean;
  leftDelimiter?: string;
  rightDelimiter?: string;
  /** A missing map key fails the render instead of printing `<no value>`. */
  errorOnMissingKey?: boolean;
  once?: boolean;
}

/**
 * A task's resources, as Nomad's task `resources` block (API JSON: `CPU`, `MemoryMB`,
 * `MemoryMaxMB`, `Cores`, `SecretsMB`).
 */
export interface Resources {
  /** CPU in MHz; becomes cpu shares / cpu.weight. */
  cpu?: number;
  /** Memory in MB: the hard limit, or the soft limit (reservation) when `memoryMaxMB` is set. */
  memoryMB?: number;
  /** Hard memory limit in MB with memory oversubscription; -1 (`MEMORY_NO_LIMIT`): no hard limit. */
  memoryMaxMB?: number;
  /** Whole CPU cores reserved for the task (a cpuset). */
  cores?: number;
  /** Size of the task's `secrets/` tmpfs in MB (Nomad's default is 1). */
  secretsMB?: number;
  /** Disk in MB (Nomad's legacy task `DiskMB`; the group's `ephemeralDisk` is what counts). */
  diskMB?: number;
}

/** Nomad's restart policy, with durations in milliseconds. */
export interface RestartPolicy {
  attempts: number;
  intervalMs: number;
  delayMs: number;
  mode: 'fail' | 'delay';
  /** Render the task's templates afresh before each restart (Nomad's `render_templates`). */
  renderTemplates?: boolean;
}

/** The client's view of one task. */
export interface TaskState {
  state: 'pending' | 'running' | 'dead';
  failed: boolean;
  restarts: number;
  lastRestart?: number;
  startedAt?: number;
  finishedAt?: number;
  /** The last exit's code (from its Terminated event), so nobody parses event details. */
  exitCode?: number;
  /** The signal that ended the last run (0: none), from its Terminated event. */
  signal?: number;
  /** The kernel's OOM killer ended the last run. */
  oomKilled?: boolean;
  events: TaskEvent[];
}

/** One task event; `type` is one of Nomad's exact strings (see {@link TaskEventType}). */
export interface TaskEvent {
  type: string;
  time: number;
  message?: string;
  displayMessage: string;
  details: Record<string, string>;
}
