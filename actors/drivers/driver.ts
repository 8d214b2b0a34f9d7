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
import type { TaskResourceUsage } from '../../model/usage.ts';

/** Everything a driver needs to start one task. Plain data. */
export interface TaskConfig {
  /** Unique per start: `<allocId>/<taskName>/<n>`. */
  id: string;
  allocId: string;
  taskName: string;
  /** The task (its `config` is the driver's config block). */
  task: Task;
  /** The full environment: Nomad's NOMAD_* variables plus the task's own `env`. */
  env: Record<string, string>;
  /** Task directory paths on the host. */
  taskDir: { dir: string; localDir: string; secretsDir: string; privateDir: string; tmpDir: string };
  /** Alloc directory paths on the host (`logsDir` is `<alloc>/alloc/logs`). */
  allocDir: { dir: string; sharedDir: string; logsDir: string };
  /** User to run as (exec only; default nobody). */
  user?: string;
  /** Log rotation: files kept per stream and the size of each. */
  logs: { maxFiles: number; maxFileSizeMB: number };
  /** A directory private to this task's driver state (sockets, state files); created by berth. */
  stateDir: string;
}

/** A started task, as plain JSON that survives a host restart. */
export interface TaskHandle {
  driver: string;
  id: string;
  config: TaskConfig;
  /** ms since epoch. */
  startedAt: number;
  /** The task's main process, when there is one. */
  pid?: number;
  /** Driver-specific, JSON-serialisable. */
  state: Record<string, unknown>;
}

/** How a task ended. */
export interface ExitResult {
  exitCode: number;
  /** Signal number that ended it, 0 for none. */
  signal: number;
  /** An error text the driver attaches to the exit ("Exit Message"). */
  err?: string;
  oomKilled?: boolean;
}

/** What a driver can do. */
export interface DriverCapabilities {
  /** 'chroot': berth builds the task dir as a chroot from `chrootEnv` before `start`. */
  fsIsolation: 'none' | 'chroot';
  sendSignals: boolean;
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
   * `signal` aborts a slow start.
   */
  start(config: TaskConfig, signal: AbortSignal): Promise<TaskHandle>;
  /** Resolves once with the exit result; rejects with `signal.reason` when `signal` aborts. */
  wait(handle: TaskHandle, signal: AbortSignal): Promise<ExitResult>;
  /**
   * Sends `killSignal` (e.g. "SIGINT") to the task, then kills it outright after `timeoutMs`.
   * Resolves once the task is gone. Stopping a task that already exited is not an error.
   */
  stop(handle: TaskHandle, timeoutMs: number, killSignal: string): Promise<void>;
  /** Sends a signal to a running task. */
  signal(handle: TaskHandle, sig: string): Promise<void>;
  /** Releases everything the driver holds for the task; `force` kills it first if still running. */
  destroy(handle: TaskHandle, force: boolean): Promise<void>;
  /** Reattaches to a task started by an earlier client (possibly another process). Throws if gone. */
  recover(handle: TaskHandle): Promise<void>;
  /** The task's resource usage now (optional: a driver without it reports nothing measured). */
  stats?(handle: TaskHandle): Promise<TaskResourceUsage>;
}
