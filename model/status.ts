/**
 * Allocation status predicates. Keep them apart: they are not interchangeable
 * (see Nomad's `Terminated`, `ServerTerminalStatus`, `TerminalStatus`).
 * @module
 */
import type { Allocation, ClientStatus } from './types.ts';

/** Client status is complete, failed or lost: what alloc watchers wait for (`unknown` is not). */
export function isTerminated(alloc: Pick<Allocation, 'clientStatus'>): boolean {
  return isClientTerminalStatus(alloc.clientStatus);
}

/**
 * Every task of the alloc is dead (Nomad's alloc runner wait channel: its task runners all
 * exited). An alloc without task states has none alive.
 */
export function tasksDead(states: Allocation['taskStates']): boolean {
  for (const s of Object.values(states ?? {})) if (s.state !== 'dead') return false;
  return true;
}

/** complete, failed or lost. */
export function isClientTerminalStatus(status: ClientStatus | undefined): boolean {
  return status === 'complete' || status === 'failed' || status === 'lost';
}

/** Desired status is stop or evict. */
export function isServerTerminal(alloc: Pick<Allocation, 'desiredStatus'>): boolean {
  return alloc.desiredStatus === 'stop' || alloc.desiredStatus === 'evict';
}

/** Server-terminal or client-terminal: what stop detection uses. */
export function isTerminal(alloc: Pick<Allocation, 'desiredStatus' | 'clientStatus'>): boolean {
  return isServerTerminal(alloc) || isTerminated(alloc);
}

/**
 * Nomad's `ShouldMigrate`: a previous alloc, not server-terminal, and the group's ephemeral disk
 * has `migrate` set.
 */
export function shouldMigrate(alloc: Allocation): boolean {
  if (!alloc.previousAllocation || isServerTerminal(alloc)) return false;
  const group = alloc.job.taskGroups.find((g) => g.name === alloc.taskGroup);
  return !!group?.ephemeralDisk?.migrate;
}

/** The allocation's task group (the caller has validated that it exists). */
export function taskGroupOf(alloc: Allocation) {
  const group = alloc.job.taskGroups.find((g) => g.name === alloc.taskGroup);
  if (!group) throw new Error(`failed to lookup task group ${JSON.stringify(alloc.taskGroup)}`);
  return group;
}
