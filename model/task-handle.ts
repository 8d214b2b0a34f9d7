/**
 * A task driver's plain-data records: what a start needs ({@link TaskConfig}), what a started task
 * is ({@link TaskHandle}, persisted so a later client can reattach) and how it ended
 * ({@link ExitResult}). The charts carry handles in their context, so these live in `model/`.
 * @module
 */
import type { Task } from './types.ts';

/** Everything a driver needs to start one task. Plain data. */
export interface TaskConfig {
  /** Unique per start: `<allocId>/<taskName>/<n>`. */
  id: string;
  allocId: string;
  taskName: string;
  /** The task (its `config` is the driver's config block). */
  task: Task;
  /** Nomad's NOMAD_* variables plus the task's own `env` (without the host's; see inheritHostEnv). */
  env: Record<string, string>;
  /** Spawn with the host environment (minus Nomad's denylist) underneath `env` (raw_exec). */
  inheritHostEnv?: boolean;
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
  /**
   * Saved before the driver's start was called: the process may or may not exist. `recover`
   * completes such a handle (reattaching what the start left) or throws
   * `TaskNotStartedError` when nothing of the task exists.
   */
  starting?: boolean;
  /** Saved once the task's exit is known, before its driver state is removed. */
  exited?: ExitResult;
}

/** How a task ended. */
export interface ExitResult {
  exitCode: number;
  /** Signal number that ended it, 0 for none. */
  signal: number;
  /** An error text the driver attaches to the exit ("Exit Message"). */
  err?: string;
  oomKilled?: boolean;
  /**
   * The driver itself went away while the task ran (Nomad's "plugin is shut down"): the task may
   * still be alive. berth then calls `recover(handle)` and waits again instead of reporting an exit.
   */
  pluginShutdown?: boolean;
}
