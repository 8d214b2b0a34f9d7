/**
 * Client status from task states, with Nomad's priority: failed > running > pending > complete.
 * @module
 */
import { tasksDead } from '../../model/status.ts';
import type { ClientStatus, TaskState } from '../../model/types.ts';

/** A computed client status and its description. */
export interface ComputedClientStatus {
  status: ClientStatus | '';
  description: string;
}

/** Nomad's `getClientStatus`. */
export function getClientStatus(states: Record<string, TaskState>): ComputedClientStatus {
  let running = false;
  let pending = false;
  let dead = false;
  for (const s of Object.values(states)) {
    if (s.state === 'dead') {
      if (s.failed) return { status: 'failed', description: 'Failed tasks' };
      dead = true;
    } else if (s.state === 'running') running = true;
    else if (s.state === 'pending') pending = true;
  }
  if (running) return { status: 'running', description: 'Tasks are running' };
  if (pending) return { status: 'pending', description: 'No tasks have started' };
  if (dead) return { status: 'complete', description: 'All tasks have completed' };
  return { status: '', description: '' };
}

/**
 * The status berth reports: Nomad's {@link getClientStatus} at every moment (`failed` as soon as
 * one task failed, while its siblings are still being killed), except that a status the chart
 * decided (max_run_duration, a failed restore) speaks once every task is dead. A local watcher
 * does not release on this status but on its runner's tasks all being dead (see
 * `actors/watchers/local.ts`), so an early `failed` never starts a preemptor beside a live sibling.
 */
export function reportedClientStatus(states: Record<string, TaskState>, decided?: { status: ClientStatus; description: string }): ComputedClientStatus {
  if (decided && tasksDead(states)) return decided;
  return getClientStatus(states);
}
