/**
 * The single-slot update queue rule (Nomad `AllocRunner.Update`): a queued update with a
 * strictly higher allocModifyIndex wins; otherwise (equal indexes included) the newer call wins.
 * @module
 */
import type { Allocation } from '../../model/types.ts';

/** Which update stays in the slot when `incoming` arrives while `queued` waits. */
export function pickQueuedUpdate(queued: Allocation | undefined, incoming: Allocation): Allocation {
  if (queued && queued.allocModifyIndex > incoming.allocModifyIndex) return queued;
  return incoming;
}
