/**
 * What an in-place update changes in a running alloc's tasks (Nomad's `TaskRunner.Update`), pure.
 *
 * - A task the update no longer has is killed with a "Killed" event whose kill reason is
 *   "update missing task"; it fails the task.
 * - A task the update adds is not run: Nomad's client makes task runners once, when the alloc is
 *   added (a scheduler never adds a task in place; that is a new allocation).
 * - A kept task takes the new definition: the running process is left alone, and the next start
 *   (a restart) uses the new driver config, env, user and logs; the next kill uses the new
 *   kill_timeout, kill_signal and shutdown_delay. Leader, lifecycle and restart policy stay as
 *   they were at the start (Nomad reads them once, too).
 * @module
 */
import type { TaskEvent, TaskGroup } from '../../model/types.ts';
import { taskEvent } from './task-events.ts';

/** Nomad's kill reason for a task an update dropped. */
export const UPDATE_MISSING_TASK = 'update missing task';

/** Task names the update dropped, and the ones it added (which are ignored). */
export function taskChanges(running: readonly string[], next: TaskGroup): { removed: string[]; added: string[] } {
  const now = new Set(next.tasks.map((t) => t.name));
  const had = new Set(running);
  return { removed: running.filter((n) => !now.has(n)), added: next.tasks.map((t) => t.name).filter((n) => !had.has(n)) };
}

/** The event a dropped task is killed with: "Killed", kill reason "update missing task", fails the task. */
export function missingTaskEvent(time: number): TaskEvent {
  return taskEvent('Killed', time, { details: { kill_reason: UPDATE_MISSING_TASK, fails_task: 'true' } });
}
