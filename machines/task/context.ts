/**
 * The task chart's plain data: its input, its context, the events it accepts, what its effects
 * take and return, and the one event it sends its parent. Nothing here does anything.
 * @module
 */
import type { TaskEvent, TaskState, TemplateChangeScript } from '../../model/types.ts';
import type { TemplateChange } from '../policy/template-change.ts';
import type { ExitResult, TaskHandle } from '../../model/task-handle.ts';
import type { RestartDecision, RestartInput, RestartSubject, RestartTrackerState } from '../policy/restarts.ts';
import type { TaskRole } from '../policy/task-roles.ts';

/** Input of the task machine (plain data). */
export interface TaskMachineInput {
  allocId: string;
  taskName: string;
  role: TaskRole;
  restart: RestartSubject;
  /** min(task.killTimeoutMs ?? 5000, client maxKillTimeoutMs). */
  killTimeoutMs: number;
  killSignal: string;
  /** Nomad's task `shutdown_delay`: how long a kill waits before signalling (default 0: none). */
  shutdownDelayMs?: number;
  initialState: TaskState;
  gateOpen: boolean;
  now: number;
  /** A handle saved by an earlier client: reattach to the task instead of starting it. */
  restoredHandle?: TaskHandle;
  /**
   * The restore found this task's process alive without a usable handle and stopped it: its run
   * is over even if the saved state never got as far as saying it started.
   */
  lostRun?: boolean;
  /**
   * Events appended so far (the state keeps only the last 10): the count continues from here, so
   * the alloc's per-task count and this one never disagree. Default `initialState.events.length`.
   */
  eventSeq?: number;
  /**
   * Task-runner hooks the task has work for: `prestart` (artifacts) runs `prestartTask` before
   * each start. (`taskServices`, the poststart hook, runs in every `running`; it knows when it
   * has nothing to do.)
   */
  hooks?: TaskHooks;
}

/** Which task-runner hooks have work for a task (plain data, from its definition). */
export interface TaskHooks {
  /** Fetch artifacts (and build the task dir) before each start. */
  prestart?: boolean;
  /**
   * Watch the task's templates while it runs (the `taskTemplates` child): only a task with
   * templates gets one, as an idle child per running task cost ~2 KB of heap.
   */
  templates?: boolean;
}

/** The task machine's context (plain data). */
export interface TaskContext {
  allocId: string;
  taskName: string;
  role: TaskRole;
  restart: RestartSubject;
  tracker: RestartTrackerState;
  killTimeoutMs: number;
  killSignal: string;
  shutdownDelayMs: number;
  /** The servers asked to skip shutdown delays, or the alloc is being destroyed. */
  skipShutdownDelay: boolean;
  /** No restart after this run (the alloc is being destroyed). */
  finalRun: boolean;
  state: TaskState;
  /** Total events ever appended (the state keeps only the last 10). */
  eventSeq: number;
  gateOpen: boolean;
  handle?: TaskHandle;
  attempt: number;
  now: number;
  lastInput?: RestartInput;
  decision?: RestartDecision;
  /** A kill arrived while a restart-kill was in flight. */
  killAfterRestart: boolean;
  /**
   * A kill arrived while the task was starting or being reattached: the start (or recovery) was
   * asked to abort, and whatever it leaves behind is killed before the task is reported dead.
   */
  killRequested: boolean;
  hooks: TaskHooks;
  /** This attempt began in `prestart` (its "Task Setup" is appended). */
  prestarted: boolean;
  /** See {@link TaskMachineInput.lostRun}. */
  lostRun: boolean;
}

/**
 * Result of the `prestartTask` actor (the prestart hooks: task dir, artifacts). Never rejects:
 * a failure carries the task event that says why ("Failed Artifact Download") and is a
 * recoverable start error for the restart policy, as in Nomad.
 */
export type PrestartOutput =
  { ok: true; time: number; events: TaskEvent[] } | { ok: false; time: number; events: TaskEvent[]; error: string; recoverable: boolean; jitter?: number };

/** Result of the `startTask` actor: never rejects, so failures stay plain data. */
export type StartOutput =
  | { ok: true; handle: TaskHandle; time: number; setupEvents?: TaskEvent[] }
  | { ok: false; time: number; error: string; recoverable: boolean; validation?: boolean; setupEvents?: TaskEvent[]; jitter?: number };

/**
 * Result of the `recoverTask` actor. `handle` is the reattached handle (completed when the saved
 * one was saved before its start); `notStarted`: that start never got as far as a process.
 */
export type RecoverOutput = { ok: true; time: number; handle?: TaskHandle } | { ok: false; time: number; error: string; notStarted?: boolean; jitter?: number };

/** Result of the `waitTask` and `killTask` actors. */
export interface ExitOutput {
  result: ExitResult;
  time: number;
  /** A uniform [0, 1) draw for the restart jitter (ClientOptions.random); 0 when absent. */
  jitter?: number;
}

/** Events the task machine accepts. */
export type TaskMachineEvent =
  | { type: 'gate'; open: boolean }
  /** Kill the task; `reason` (e.g. "Sibling Task Failed") is appended first when the task is live. */
  | {
      type: 'kill';
      time: number;
      reason?: TaskEvent;
      killReason?: string;
      /** Display message of the "Killing" event (max_run_duration says why). */
      killingDisplay?: string;
      /** No "Killing" event: `reason` says it all ("update missing task"). */
      noKillingEvent?: boolean;
      /** Skip the task's shutdown_delay (the servers' `noShutdownDelay`, or a destroy). */
      skipShutdownDelay?: boolean;
    }
  /** Stop waiting out the shutdown_delay: kill now. */
  | { type: 'skipShutdownDelay' }
  /** The alloc is being destroyed: the current run is the last (a poststop task runs once). */
  | { type: 'finalRun' }
  /** The task's definition changed in place: the next kill uses these. */
  | { type: 'settings'; killTimeoutMs: number; killSignal: string; shutdownDelayMs: number }
  /** Restart a running task ("Restart Signaled" with the given reason). */
  | { type: 'restart'; time: number; reason?: string; failure?: boolean }
  /** Re-run a dead task too (alloc-level restartAll). */
  | { type: 'restartAll'; time: number; reason?: string }
  /** Append an event without changing state (hook messages, ...). */
  | { type: 'append'; event: TaskEvent }
  /**
   * Send `signal` to the running task: "Signaling", then a `signalTask` child with id
   * `signal.<requestId>` whose done or error is the caller's answer. Not running: no child.
   */
  | { type: 'signal'; time: number; signal: string; requestId: string }
  /**
   * The task's templates re-rendered and these changed (the `taskTemplates` effect): restart,
   * signal, run scripts, or nothing, by Nomad's rule (machines/policy/template-change.ts).
   */
  | { type: 'template.changed'; time: number; requestId: string; changes: TemplateChange[] }
  /** A re-render failed: the task is killed, failed ("Template failed: ..."). */
  | { type: 'template.failed'; time: number; error: string };

/** What the `startTask` and `prestartTask` effects take: the attempt they are for. */
export interface StartTaskInput {
  allocId: string;
  taskName: string;
  attempt: number;
}

/** What the `prestartTask` effect takes: the attempt, and the chart's time for its events. */
export interface PrestartTaskInput extends StartTaskInput {
  now: number;
}

/** What the `waitTask` and `recoverTask` effects take: the handle of the task's process. */
export interface TaskHandleInput {
  allocId: string;
  taskName: string;
  handle: TaskHandle;
}

/** What the `killTask` effect takes: the handle, and how to kill it. */
export interface KillTaskInput extends TaskHandleInput {
  timeoutMs: number;
  signal: string;
}

/** What the `signalTask` effect takes: the handle, and the signal to send. */
export interface SignalTaskInput extends TaskHandleInput {
  signal: string;
}

/** What the `templateEffects` effect takes: the task's process, the signals to send, the scripts to run. */
export interface TemplateEffectsInput extends TaskHandleInput {
  signals: string[];
  scripts: TemplateChangeScript[];
}

/** What the `taskServices` effect takes: when the run it registers began. */
export interface TaskServicesInput {
  allocId: string;
  taskName: string;
  startedAt: number;
}

/** The one event the task chart sends its parent (the alloc chart): the task's state changed. */
export interface TaskStateReport {
  type: 'task.state';
  taskName: string;
  state: TaskState;
  /** Total events ever appended (the bus publishes the new ones). */
  eventSeq: number;
}
