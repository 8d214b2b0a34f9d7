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
  /** Server-side version; higher is newer. */
  allocModifyIndex: number;
  createTime?: number;
  taskStates?: Record<string, TaskState>;
  /** Nomad's `<job>.<group>[<index>]`; `NOMAD_ALLOC_INDEX` comes from it. */
  name?: string;
  /** What the servers ask of this alloc beyond its desired status (Nomad's `DesiredTransition`). */
  desiredTransition?: DesiredTransition;
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
  /** Hard memory limit in MB with memory oversubscription. */
  memoryMaxMB?: number;
  /** Whole CPU cores reserved for the task (a cpuset). */
  cores?: number;
  /** Size of the task's `secrets/` tmpfs in MB (Nomad's default is 1). */
  secretsMB?: number;
}

/** Nomad's restart policy, with durations in milliseconds. */
export interface RestartPolicy {
  attempts: number;
  intervalMs: number;
  delayMs: number;
  mode: 'fail' | 'delay';
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
