/**
 * The restore's cross-check of the state store against the executors alive under the data dir
 * (see `actors/drivers/executor/audit.ts`): a live executor is adopted when the store holds a
 * usable handle of its task in an alloc being restored (the chart reattaches through the driver's
 * `recover`), and otherwise stopped and reported, before any alloc could start that task again.
 * @module
 */
import type { TaskHandle } from '../drivers/driver.ts';
import { killLiveExecutor, liveExecutors, type LiveExecutor } from '../drivers/executor/audit.ts';

/** What the restore knows of one stored alloc. */
export interface AuditedAlloc {
  allocId: string;
  handles: Record<string, TaskHandle>;
}

/** True when `h` accounts for the live executor `e` (the same executor, or a start under way). */
function accountsFor(h: TaskHandle | undefined, e: LiveExecutor): boolean {
  if (!h) return false;
  if (h.starting) return true; // recover finds the executor by its spec path
  const pid = (h.state as { executorPid?: unknown }).executorPid;
  return typeof pid === 'number' && e.executorPids.includes(pid);
}

/**
 * Stops every live executor under `dataDir` that neither a running runner (`owned`) nor a
 * restored handle accounts for; `report` is told of each (alloc id and why). Returns what it
 * stopped.
 */
export async function stopUnownedExecutors(
  dataDir: string,
  restoring: AuditedAlloc[],
  owned: (allocId: string) => boolean,
  report: (allocId: string, message: string) => void,
): Promise<LiveExecutor[]> {
  const byId = new Map(restoring.map((a) => [a.allocId, a]));
  const stopped: LiveExecutor[] = [];
  for (const e of liveExecutors(dataDir)) {
    if (owned(e.allocId)) continue;
    const a = byId.get(e.allocId);
    if (a && accountsFor(a.handles[e.task], e)) continue;
    await killLiveExecutor(e);
    stopped.push(e);
    report(
      e.allocId,
      `task ${JSON.stringify(e.task)} of allocation ${e.allocId} was still running (executor pid ${e.executorPids.join(', ')}) but the state store ${
        a ? 'had no usable handle for it' : 'does not know the allocation'
      }: stopped it rather than leave it unowned or start it twice`,
    );
  }
  return stopped;
}
