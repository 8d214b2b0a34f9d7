/**
 * Task events with Nomad's exact type strings, details keys and display messages, and the
 * task-state bookkeeping that appending one implies (max 10 events, FailsTask, Restarts).
 * @module
 */
import { formatGoDuration } from '../../model/duration.ts';
import type { TaskEvent, TaskState } from '../../model/types.ts';

/** Nomad's task event type strings. */
export const TaskEventType = {
  SetupFailure: 'Setup Failure',
  DriverFailure: 'Driver Failure',
  Received: 'Received',
  FailedValidation: 'Failed Validation',
  Started: 'Started',
  Terminated: 'Terminated',
  Killing: 'Killing',
  Killed: 'Killed',
  Restarting: 'Restarting',
  NotRestarting: 'Not Restarting',
  RestartSignal: 'Restart Signaled',
  Signaling: 'Signaling',
  TaskSetup: 'Task Setup',
  SiblingFailed: 'Sibling Task Failed',
  LeaderDead: 'Leader Task Dead',
  MainDead: 'Main Tasks Dead',
  HookFailed: 'Task hook failed',
  HookMessage: 'Task hook message',
  FailedRestoringTask: 'Failed Restoring Task',
  Driver: 'Driver',
  Reconnected: 'Reconnected',
  WaitingShutdownDelay: 'Waiting for shutdown delay',
  DownloadingArtifacts: 'Downloading Artifacts',
  ArtifactDownloadFailed: 'Failed Artifact Download',
  AllocUnhealthy: 'Alloc Unhealthy',
  SkippingShutdownDelay: 'Skipping shutdown delay',
} as const;

/** Most events kept per task. */
export const MAX_TASK_EVENTS = 10;

/** Options for {@link taskEvent}. */
export interface TaskEventInit {
  message?: string;
  displayMessage?: string;
  details?: Record<string, string>;
}

/** A new event; its display message is filled in per Nomad's rules when not given. */
export function taskEvent(type: string, time: number, init: TaskEventInit = {}): TaskEvent {
  const details = { ...(init.details ?? {}) };
  const ev: TaskEvent = { type, time, displayMessage: '', details };
  if (init.message) ev.message = init.message;
  ev.displayMessage = init.displayMessage || displayMessage(ev);
  return ev;
}

function displayMessage(ev: TaskEvent): string {
  const d = ev.details;
  switch (ev.type) {
    case 'Received':
      return 'Task received by client';
    case 'Started':
      return 'Task started by client';
    case 'Task Setup':
      return ev.message ?? '';
    case 'Setup Failure':
      return d.setup_error || 'Task setup failed';
    case 'Driver Failure':
      return d.driver_error || 'Failed to start task';
    case 'Failed Validation':
      return d.validation_error || 'Validation of task failed';
    case 'Killing': {
      if (d.kill_reason) return d.kill_reason;
      if (d.kill_timeout && d.kill_timeout !== '0s') return `Sent interrupt. Waiting ${d.kill_timeout} before force killing`;
      return 'Sent interrupt';
    }
    case 'Killed':
      return d.kill_error || 'Task successfully killed';
    case 'Terminated': {
      let s = `Exit Code: ${d.exit_code ?? '0'}`;
      if (d.signal && d.signal !== '0') s += `, Signal: ${d.signal}`;
      if (d.exit_message) s += `, Exit Message: ${JSON.stringify(d.exit_message)}`;
      return s;
    }
    case 'Restarting': {
      const delay = formatGoDuration(Number(d.start_delay ?? '0') / 1e6);
      const reason = d.restart_reason;
      return reason && reason !== 'Restart within policy' ? `${reason} - Task restarting in ${delay}` : `Task restarting in ${delay}`;
    }
    case 'Not Restarting':
      return d.restart_reason || 'Task exceeded restart policy';
    case 'Sibling Task Failed':
      return d.failed_sibling ? `Task's sibling ${JSON.stringify(d.failed_sibling)} failed` : "Task's sibling failed";
    case 'Restart Signaled':
      return d.restart_reason || 'Task signaled to restart';
    case 'Leader Task Dead':
      return 'Leader Task in Group dead';
    case 'Main Tasks Dead':
      return 'Main tasks in the group died';
    case 'Reconnected':
      return 'Client reconnected';
    case 'Downloading Artifacts':
      return 'Client is downloading artifacts';
    case 'Failed Artifact Download':
      return d.download_error || 'Failed to download artifacts';
    case 'Signaling': {
      const sig = d.task_signal;
      const reason = d.task_signal_reason;
      if (!sig && !reason) return 'Task being sent a signal';
      if (!sig) return reason!;
      if (!reason) return `Task being sent signal ${sig}`;
      return `Task being sent signal ${sig}: ${reason}`;
    }
    default:
      return ev.message ?? '';
  }
}

/** A fresh pending task state with its "Received" event. */
export function newTaskState(time: number): TaskState {
  return { state: 'pending', failed: false, restarts: 0, events: [taskEvent('Received', time)] };
}

/**
 * Appends `ev` to a copy of `s`: keeps the last {@link MAX_TASK_EVENTS}, sets `failed` when the
 * event fails the task, counts a "Restarting" event as a restart, and takes a "Terminated"
 * event's exit code, signal and OOM kill as typed fields.
 */
export function appendEvent(s: TaskState, ev: TaskEvent): TaskState {
  const events = s.events.length >= MAX_TASK_EVENTS ? [...s.events.slice(s.events.length - MAX_TASK_EVENTS + 1), ev] : [...s.events, ev];
  const next: TaskState = { ...s, events };
  if (ev.details.fails_task === 'true') next.failed = true;
  if (ev.type === 'Terminated') {
    // The typed exit fields, read once here from Nomad's string details.
    next.exitCode = Number(ev.details.exit_code ?? 0);
    next.signal = Number(ev.details.signal ?? 0);
    next.oomKilled = ev.details.oom_killed === 'true';
  }
  if (ev.type === 'Restarting') {
    next.restarts = s.restarts + 1;
    next.lastRestart = ev.time;
  }
  return next;
}

/**
 * Whether the task's latest run started and has not ended: its last Started comes after its last
 * Terminated (or Failed Restoring Task, or Driver Failure). A task waiting out its shutdown delay is `pending` by state yet its run is open.
 * Falls back to the state when neither event is still in the (capped) event list.
 */
export function runOpen(s: TaskState): boolean {
  for (let i = s.events.length - 1; i >= 0; i--) {
    const t = s.events[i]!.type;
    if (t === 'Started') return true;
    // A run also ends when its reattach failed or its driver failed it (no Terminated then).
    if (t === 'Terminated' || t === 'Failed Restoring Task' || t === 'Driver Failure') return false;
  }
  return s.state === 'running';
}

/** Details helpers, named after Nomad's setters. */
export const details = {
  killTimeout: (ms: number) => ({ kill_timeout: formatGoDuration(ms) }),
  /** A Terminated event's details; `oom_killed` appears only when the kernel OOM-killed the task. */
  exit: (code: number, signal: number, msg?: string, oomKilled?: boolean) => ({
    exit_code: String(code),
    signal: String(signal),
    ...(msg ? { exit_message: msg } : {}),
    ...(oomKilled ? { oom_killed: 'true' } : {}),
  }),
  restart: (delayMs: number, reason: string) => ({ start_delay: String(Math.round(delayMs * 1e6)), restart_reason: reason }),
};
