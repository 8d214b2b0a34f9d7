/**
 * The task driver interface: how berth starts, waits on, signals, stops, destroys and recovers
 * one task. Implement it to plug in your own driver and pass it in `ClientOptions.drivers`.
 *
 * Lifecycle of one task run, as the task actor drives it:
 * ```
 *  validateConfig ─► start ─► wait ──────────────► ExitResult ─► destroy
 *                      │        ▲ (stop / signal while waiting)
 *                      └─ DriverStartError (recoverable or not)
 *  after a host restart:  recover(savedHandle) ─► wait ...
 * ```
 * A {@link TaskHandle} is plain JSON: berth persists it so a later client can `recover` the task
 * (tasks outlive the host process). A driver keeps its own in-memory state keyed by `handle.id`.
 * @module
 */
import type { Task } from '../../model/types.ts';
import type { ExitResult, TaskConfig, TaskHandle } from '../../model/task-handle.ts';
import type { TaskResourceUsage } from '../../model/usage.ts';

export type { ExitResult, TaskConfig, TaskHandle } from '../../model/task-handle.ts';

/** Options of {@link Driver.exec}. */
export interface ExecOptions {
  /** Input for the command (its stdin is closed at the end). */
  stdin?: string | Buffer | AsyncIterable<Buffer>;
  tty?: boolean;
  /** Ends the command early (its process group is killed); the exec rejects with the reason. */
  signal?: AbortSignal;
  /** Kills the command after this long; the exec rejects with a TimeoutError. */
  timeoutMs?: number;
  /**
   * Each output chunk as it arrives. Returning a promise pauses the command's output until it
   * settles (its pipes fill and its writes block): how a slow reader holds the command back.
   */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void | Promise<void>;
  /** Bound on the copies of stdout and stderr the result keeps (default 1 MiB each). */
  maxOutputBytes?: number;
}

/** What {@link Driver.exec} ran and how it ended. */
export interface ExecResult {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
  signal: number;
  err?: string;
}

/**
 * What a driver tells while it starts a task (Nomad's driver `TaskEvent`s: "Downloading image",
 * pull progress); each becomes a "Driver" task event.
 */
export type DriverEventSink = (message: string, details?: Record<string, string>) => void;

/** What a driver can do. */
export interface DriverCapabilities {
  /** 'chroot': berth builds the task dir as a chroot from `chrootEnv` before `start`. */
  fsIsolation: 'none' | 'chroot';
  sendSignals: boolean;
  /** The driver implements {@link Driver.exec}. */
  exec?: boolean;
}

/**
 * What a driver's fingerprint found, as Nomad's node API reports each driver: whether it is there
 * at all, whether it is healthy, a health text ("Healthy", "Docker is not available") and the
 * `driver.<name>.*` attributes constraints can read.
 */
export interface DriverFingerprint {
  detected: boolean;
  healthy: boolean;
  healthDescription: string;
  /** `driver.<name>`, `driver.<name>.version`, ... (empty when not detected). */
  attributes: Record<string, string>;
}

/** A task driver. Every method may be called concurrently for different tasks. */
export interface Driver {
  /** The name jobs use in `task.driver`. */
  readonly name: string;
  readonly capabilities: DriverCapabilities;
  /** Throws DriverConfigError ("Failed Validation") for a bad `task.config`. Synchronous, no I/O. */
  validateConfig(task: Task): void;
  /**
   * Starts the task. Throws DriverStartError (with `recoverable`) when it cannot start.
   * `signal` aborts a slow start. An aborted start either rejects once nothing of the task is
   * left, or resolves with the handle of the task that already exists: berth then kills it
   * through `stop` and `wait` before it reports the task dead. `emit` tells what the start is
   * doing (optional for a driver to use).
   */
  start(config: TaskConfig, signal: AbortSignal, emit?: DriverEventSink): Promise<TaskHandle>;
  /** Resolves once with the exit result; rejects with `signal.reason` when `signal` aborts. */
  wait(handle: TaskHandle, signal: AbortSignal): Promise<ExitResult>;
  /**
   * Sends `killSignal` (e.g. "SIGINT") to the task, then kills it outright after `timeoutMs`.
   * Resolves once the task is gone. Stopping a task that already exited is not an error.
   * `stop` and `destroy` also accept a handle saved before its start (`handle.starting`): they
   * kill whatever that start left.
   */
  stop(handle: TaskHandle, timeoutMs: number, killSignal: string): Promise<void>;
  /** Sends a signal to a running task. */
  signal(handle: TaskHandle, sig: string): Promise<void>;
  /** Releases everything the driver holds for the task; `force` kills it first if still running. */
  destroy(handle: TaskHandle, force: boolean): Promise<void>;
  /**
   * Reattaches to a task started by an earlier client (possibly another process). Throws if gone.
   * A handle saved before its start (`handle.starting`) is completed from what the start left
   * and returned; when nothing of the task exists it throws `TaskNotStartedError`.
   */
  recover(handle: TaskHandle): Promise<TaskHandle | void>;
  /** Runs a command inside a running task (Nomad's exec), collecting its output. Optional. */
  exec?(handle: TaskHandle, command: string[], opts?: ExecOptions): Promise<ExecResult>;
  /** The task's resource usage now (optional: a driver without it reports nothing measured). */
  stats?(handle: TaskHandle): Promise<TaskResourceUsage>;
  /**
   * Whether the driver can run tasks here now (an Engine that answers, say). Optional: a driver
   * without it is always detected and healthy. Never throws: what is missing is a finding.
   */
  fingerprint?(): Promise<DriverFingerprint>;
  /**
   * Called by the client's `shutdown()`: let go of what the driver holds in the host (timers, log
   * copies, a helper process with no task left). Running tasks are never touched. Optional.
   */
  shutdown?(): Promise<void>;
}
