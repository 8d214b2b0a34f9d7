/**
 * `shutdown_delay` (Nomad's group and task `shutdown_delay`), pure: how long to wait before a kill
 * and the task event that says so.
 *
 * Nomad waits twice, in this order, each wait cut short when the servers ask to skip delays
 * (`desiredTransition.noShutdownDelay`, Nomad's `-no-shutdown-delay`):
 * - the group's delay, once, in the group-services PreKill hook, before the first task is killed;
 * - each task's own delay, in its kill, after the task's PreKill hooks: the task goes back to
 *   `pending` with "Waiting for shutdown delay" (or "Skipping shutdown delay") and is killed
 *   when the delay is over (or earlier, if it exits by itself).
 * @module
 */
import { formatGoDuration } from '../../model/duration.ts';
import type { Allocation, TaskEvent } from '../../model/types.ts';
import { taskEvent } from './task-events.ts';

/** Whether the servers asked to skip every shutdown delay of this alloc. */
export function skipsShutdownDelay(alloc: Pick<Allocation, 'desiredTransition'>): boolean {
  return alloc.desiredTransition?.noShutdownDelay === true;
}

/**
 * The event a task gets when its kill meets its `shutdown_delay`: Nomad's "Waiting for shutdown
 * delay" or, when the delay is skipped, "Skipping shutdown delay", with Nomad's display message.
 * @example shutdownDelayEvent(5000, false, now).displayMessage // 'Waiting for shutdown_delay of 5s before killing the task.'
 */
export function shutdownDelayEvent(delayMs: number, skip: boolean, time: number): TaskEvent {
  const d = formatGoDuration(delayMs);
  return skip
    ? taskEvent('Skipping shutdown delay', time, { displayMessage: `Skipping shutdown_delay of ${d} before killing the task.` })
    : taskEvent('Waiting for shutdown delay', time, { displayMessage: `Waiting for shutdown_delay of ${d} before killing the task.` });
}
