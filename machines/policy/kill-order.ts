/**
 * Group-level kill decisions (Nomad's `handleTaskStateUpdates` and `killTasks`), pure.
 * @module
 */
import type { TaskState } from '../../model/types.ts';
import type { TaskRole } from './task-roles.ts';

/** The event to put on every live task before killing the group. */
export interface GroupKillEvent {
  type: 'Sibling Task Failed' | 'Leader Task Dead' | 'Main Tasks Dead';
  failedSibling?: string;
}

/**
 * Whether the group must be killed, and with which event: a failed task kills its siblings, a dead
 * leader kills the rest (and takes priority), and when only sidecars are left the main tasks are
 * dead. Poststop tasks are ignored.
 */
export function groupKillEvent(roles: TaskRole[], states: Record<string, TaskState>): GroupKillEvent | undefined {
  let ev: GroupKillEvent | undefined;
  const live: TaskRole[] = [];
  for (const r of roles) {
    if (r.poststop) continue;
    const s = states[r.name];
    if (!s || s.state !== 'dead') {
      live.push(r);
      continue;
    }
    if (s.failed && !ev) ev = { type: 'Sibling Task Failed', failedSibling: r.name };
    else if (r.leader) ev = { type: 'Leader Task Dead' };
  }
  if (live.length === 0) return undefined;
  if (!ev && roles.some((r) => r.sidecar && !r.poststop) && live.every((r) => r.sidecar)) ev = { type: 'Main Tasks Dead' };
  return ev;
}

/**
 * Kill phases in order: the leader; every other non-sidecar, non-poststop task; the sidecars.
 * Poststop tasks are not killed on stop (they run after). Empty phases are dropped.
 */
export function killPhases(roles: TaskRole[]): string[][] {
  const leader = roles.find((r) => r.leader && !r.poststop);
  const mains = roles.filter((r) => r !== leader && !r.sidecar && !r.poststop).map((r) => r.name);
  const sidecars = roles.filter((r) => r !== leader && r.sidecar && !r.poststop).map((r) => r.name);
  return [leader ? [leader.name] : [], mains, sidecars].filter((p) => p.length > 0);
}
