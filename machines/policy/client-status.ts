/**
 * Client status from task states, with Nomad's priority: failed > running > pending > complete.
 * @module
 */
import { isClientTerminalStatus } from '../../model/status.ts';
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
 * The status berth reports: Nomad's {@link getClientStatus}, except that a terminal status waits
 * until every task is dead. Nomad says `failed` as soon as one task failed, while its siblings are
 * still being killed; berth's watchers release a preemptor on a terminal status, so reporting it
 * early would start the preemptor beside live processes (invariant I1 in docs/invariants.md).
 */
export function reportedClientStatus(states: Record<string, TaskState>): ComputedClientStatus {
  const s = getClientStatus(states);
  if (!isClientTerminalStatus(s.status || undefined) || Object.values(states).every((t) => t.state === 'dead')) return s;
  const live: Record<string, TaskState> = {};
  for (const [name, t] of Object.entries(states)) live[name] = t.state === 'dead' ? { ...t, failed: false } : t;
  return getClientStatus(live);
}
