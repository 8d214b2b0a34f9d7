/**
 * Disconnected clients (Nomad's `disconnect` block, `client/client.go` `updateAlloc`), pure.
 *
 * While a client is out of touch, its servers mark its allocs `unknown` (instead of `lost`, for
 * `disconnect.lost_after`); the client itself notices nothing and its tasks keep running. When it
 * is back, the servers send the alloc with client status `unknown` and a higher index: the client
 * does not update the alloc then, it *reconnects* it: every task gets a "Reconnected" event, the
 * alloc takes the new index, and the client's real status (from its task states) goes back to the
 * servers. A stop (server-terminal) is an ordinary update even then.
 * @module
 */
import { isServerTerminal } from '../../model/status.ts';
import type { Allocation } from '../../model/types.ts';

/** Whether `update` reconnects `current` (Nomad's condition, exactly). */
export function isReconnect(current: Pick<Allocation, 'allocModifyIndex'>, update: Allocation): boolean {
  return update.clientStatus === 'unknown' && update.allocModifyIndex > current.allocModifyIndex && !isServerTerminal(update);
}
