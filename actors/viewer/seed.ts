/**
 * What a viewer feed made after the fact needs to know: the bus messages that already went by
 * (before any viewer or recording hooked the client) rebuilt from each alloc's current state and
 * its stored task events. Without them a page opened while a preemptor waited on its victims saw
 * the preemptor in `waiting-prev` and "nothing waits", with an empty timeline.
 * @module
 */
import type { BusMessage } from '../../bus/messages.ts';
import type { AllocState } from '../../model/alloc-state.ts';
import { isTerminated } from '../../model/status.ts';
import type { Allocation } from '../../model/types.ts';

/** The part of an alloc runner the seed reads. */
export interface SeedSource {
  alloc(): Allocation;
  state(): AllocState;
  isMigrating(): boolean;
}

/**
 * Bus messages that rebuild each alloc's timeline (its task events, oldest first), who it waits
 * for (released once the watched alloc is terminated, or the alloc moved past its wait), and
 * its state now. `local(id)` is the client's own view of a watched alloc, when it runs here.
 */
export function seedMessages(runners: SeedSource[], local: (allocId: string) => Allocation | undefined, now: number): BusMessage[] {
  const out: BusMessage[] = [];
  for (const r of runners) {
    const alloc = r.alloc();
    const allocId = alloc.id;
    const events: BusMessage[] = [];
    for (const [task, ts] of Object.entries(alloc.taskStates ?? {}))
      for (const event of ts.events) events.push({ type: 'task.event', time: event.time, allocId, task, event } as BusMessage);
    events.sort((a, b) => a.time - b.time);
    out.push(...events);

    const state = r.state();
    const watched: Array<[string, 'previous' | 'preempted']> = [
      ...(alloc.previousAllocation ? [[alloc.previousAllocation, 'previous'] as [string, 'previous']] : []),
      ...(alloc.preemptedAllocations ?? []).map((id) => [id, 'preempted'] as [string, 'preempted']),
    ];
    if (state !== 'pending') {
      const past = state !== 'waiting-prev' || r.isMigrating();
      for (const [watchedAllocId, role] of watched) {
        const other = local(watchedAllocId);
        out.push({ type: 'watcher.waiting', time: now, allocId, watchedAllocId, role, mode: other ? 'local' : 'remote' } as BusMessage);
        if (past || (other && isTerminated(other)))
          out.push({
            type: 'watcher.released',
            time: now,
            allocId,
            watchedAllocId,
            reason: 'terminated',
            ...(other ? { clientStatus: other.clientStatus } : {}),
          } as BusMessage);
      }
    }
    out.push({ type: 'alloc.state', time: now, allocId, from: null, to: state } as BusMessage);
  }
  return out;
}
