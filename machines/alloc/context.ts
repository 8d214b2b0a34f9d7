/**
 * The alloc chart's plain data: its input, its context, the events it accepts, and the one
 * hook-kind type its `runHooks` effect takes. Nothing here does anything.
 * @module
 */
import type { Allocation, ClientStatus, TaskState } from '../../model/types.ts';
import type { AllocHookKind } from '../../model/hook-kind.ts';
import type { TaskHandle } from '../../model/task-handle.ts';
import type { WatchRequest } from '../../model/watch.ts';
import type { GroupKillEvent } from '../policy/kill-order.ts';
import type { CoordinatorState } from '../policy/lifecycle-gates.ts';
import type { TaskSettings } from '../policy/task-settings.ts';
import type { TaskRole } from '../policy/task-roles.ts';
import type { TaskMachineEvent } from '../task/index.ts';
import type { MigrationPlan } from '../policy/migration-plan.ts';

export type { AllocHookKind } from '../../model/hook-kind.ts';
export type { TaskSettings } from '../policy/task-settings.ts';

/** Input of the alloc machine (plain data); {@link allocMachineInput} makes it for a runner. */
export interface AllocMachineInput {
  alloc: Allocation;
  roles: TaskRole[];
  tasks: Record<string, TaskSettings>;
  now: number;
  /** Bound on `waiting-prev.waiting` (ms); undefined waits as long as it takes. */
  prevAllocWaitTimeoutMs?: number;
  /** Skip the watcher when nothing is watched (no previous alloc, no preempted allocs). */
  hasWatched: boolean;
  /**
   * What the watcher plans with (plain flags): whether the previous alloc and each preempted one
   * has a local runner (`true`) or not (`null`), and whether the servers can be asked.
   */
  watchSources?: Omit<WatchRequest, 'alloc'>;
  /** Restoring a saved alloc: task name -> saved driver handle (plain JSON). */
  restoredHandles?: Record<string, TaskHandle>;
  /** Restoring an alloc whose destroy had begun: finish the destroy, run nothing. */
  destroyRequested?: boolean;
  /** The client's cap on kill timeouts (for task definitions an update changes). Default 30 s. */
  maxKillTimeoutMs?: number;
  /** Restored from the client's records (its alloc dir must still be there). */
  restoring?: boolean;
  /** Restored tasks an update had dropped: killed as soon as their actors exist. */
  removedTasks?: string[];
  /** The host registered hooks with an `update` method: non-terminal updates run them. */
  hasUpdateHooks?: boolean;
}

/** A restart of the group asked for (it waits for the group's delay and the preTaskRestart hooks). */
export interface PendingRestart {
  /** `all` re-runs every task, dead ones too (RestartAll); `running` only the running ones (RestartRunning). */
  kind: 'all' | 'running';
  time: number;
  reason?: string;
  /** Each task's restart counts against its restart policy (Nomad's `Restart(..., failure)`: a check_restart). */
  failure?: true;
}

/**
 * Where the max_run_duration timer is: `never` before the alloc first waited or ran (a stop
 * then arms none), `closed` outside the states that keep it, `open` inside one with no timer
 * child (no deadline), `armed` with its child running.
 */
export type MaxRunTimerState = 'never' | 'closed' | 'open' | 'armed';

/** The alloc machine's context (plain data). */
export interface AllocContext {
  allocId: string;
  alloc: Allocation;
  roles: TaskRole[];
  tasks: Record<string, TaskSettings>;
  taskStates: Record<string, TaskState>;
  /** Total events ever appended per task (the bus publishes the new ones). */
  eventSeq: Record<string, number>;
  coordinator: CoordinatorState;
  spawned: boolean;
  killEvent?: GroupKillEvent;
  /** Kill phases still to run, and the tasks of the current phase. */
  killQueue: string[][];
  killCurrent: string[];
  /** Bumps whenever the client view (task states, alloc) changes. */
  version: number;
  setupError?: string;
  previousNodeId?: string;
  prevAllocWaitTimeoutMs?: number;
  hasWatched: boolean;
  watchSources?: Omit<WatchRequest, 'alloc'>;
  now: number;
  restoredHandles?: Record<string, TaskHandle>;
  /**
   * The alloc was already client-terminal (complete, failed, lost) when this client got it, from
   * the servers or from its own records: it builds nothing, runs no prerun hook and starts no
   * task (Nomad's shouldRun; #5883 re-ran finished batch allocs on restore). Its client status
   * stays the one it came with.
   */
  arrivedTerminal: boolean;
  /** The client status (and description) a terminal alloc arrived with: what it keeps reporting. */
  arrivedStatus?: Pick<Allocation, 'clientStatus' | 'clientDescription'>;
  destroyRequested: boolean;
  /** The group's shutdown_delay (ms), waited once before the first kill. */
  groupShutdownDelayMs: number;
  /** Shutdown delays are skipped: the servers said so (`noShutdownDelay`) or a destroy began. */
  delaysSkipped: boolean;
  /** The preKill hooks ran (they run once, before the first kill). */
  preKillDone: boolean;
  /** The postrun hooks ran. */
  postrunDone: boolean;
  /** max_run_duration elapsed: the alloc is stopped, complete, with Nomad's description. */
  maxRunExceeded: boolean;
  /** When max_run_duration ends (ms since the epoch), if it applies. */
  maxRunDeadline?: number;
  /** Where the max_run_duration timer child is (so no action asks its own snapshot). */
  maxRunTimer: MaxRunTimerState;
  /** A client status the task states do not say (max_run_duration, a failed restore). */
  statusOverride?: { status: ClientStatus; description: string };
  /** Group restarts asked for while the group's delay and the preTaskRestart hooks run. */
  pendingRestarts: PendingRestart[];
  /** Restored from the state store (its alloc dir must already exist). */
  restoring: boolean;
  /** Tasks an update dropped: killed, and never started again (not even by restartAll). */
  removedTasks: string[];
  maxKillTimeoutMs: number;
  /** The host has update hooks: updates wait their turn in the update queue child (`update-queue.ts`). */
  hasUpdateHooks: boolean;
}

/** Events the alloc machine accepts. */
export type AllocMachineEvent =
  /** `released`: the update queue child hands it back, its turn come (it is applied, not queued again). */
  | { type: 'update'; alloc: Allocation; time: number; released?: true }
  | { type: 'destroy'; time: number }
  | { type: 'task.state'; taskName: string; state: TaskState; eventSeq: number }
  /** Forwards an event to one task's actor (restart, signal events). */
  | { type: 'toTask'; taskName: string; event: TaskMachineEvent }
  /** Alloc-level restart (after the group's delay and the preTaskRestart hooks): every task, dead ones too. */
  | { type: 'restartAll'; time: number; reason?: string }
  /** Alloc-level restart of the running tasks only (Nomad's RestartRunning), as restartAll waits. */
  | { type: 'restartRunning'; time: number; reason?: string; failure?: boolean }
  /** Restart one running task at once (Nomad's RestartTask runs no restart hook). */
  | { type: 'restartTask'; taskName: string; time: number; reason?: string; failure?: boolean }
  /** The max_run_duration timer fired (it was armed for `deadline`). */
  | { type: 'maxRunDuration.elapsed'; deadline: number; time: number };

/** Actor id of a task: `task-<allocId>-<taskName>`. */
export const taskActorId = (allocId: string, taskName: string) => `task-${allocId}-${taskName}`;

/** The `migrateData` effect's input: the plan the chart decided. */
export interface MigrateDataInput {
  allocId: string;
  plan: MigrationPlan;
}

/** The `runHooks` effect's input. */
export interface RunHooksInput {
  allocId: string;
  kind: AllocHookKind;
}
