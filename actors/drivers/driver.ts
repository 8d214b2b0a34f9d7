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
import type { ExitResult, TaskConfig, TaskHandle } from '../../model/driver-types.ts';
import type { Task } from '../../model/types.ts';
import type { TaskResourceUsage } from '../../model/usage.ts';

export type { ExitResult, TaskConfig, TaskHandle } from '../../model/driver-types.ts';

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
