/**
 * The plain-data side of a task driver: what it gets to start a task, the handle it returns (saved
 * so a later client can reattach), and how a task ended. Shared by the drivers, the task chart
 * and the state store; the `Driver` interface itself is in `actors/drivers/driver.ts`.
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
