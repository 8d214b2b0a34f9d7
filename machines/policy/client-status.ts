/**
 * Client status from task states, with Nomad's priority: failed > running > pending > complete.
 * @module
 */
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
