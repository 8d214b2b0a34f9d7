/** Helpers for the garbage collector's specs. */
import type { AllocRunner, Client } from '../../../actors/client/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import type { Allocation } from '../../../model/types.ts';

type Snap = { matches(v: unknown): boolean };
type WithActor = { actor: { getSnapshot(): Snap; subscribe(fn: (s: Snap) => void): { unsubscribe(): void } } };

/** Resolves once the runner rests in stopping.stopped (what the collector waits for). */
export function settled(r: AllocRunner): Promise<void> {
  const actor = (r as AllocRunner & WithActor).actor;
  const done = (s: Snap) => s.matches({ stopping: 'stopped' });
  if (done(actor.getSnapshot())) return Promise.resolve();
  return new Promise((resolve) => {
    const sub = actor.subscribe((s) => {
      if (!done(s)) return;
      queueMicrotask(() => sub.unsubscribe());
      resolve();
    });
  });
}

/** A batch alloc whose one mock task finishes at once. */
export function quickBatch(over: Partial<Allocation> = {}): Allocation {
  return makeAlloc([mockTask('web', { run_for: '1ms' })], { jobType: 'batch', ...over });
}

/** Adds `n` batch allocs one after the other, each run to completion (oldest first). */
export async function terminalAllocs(client: Client, n: number): Promise<AllocRunner[]> {
  const out: AllocRunner[] = [];
  for (let i = 0; i < n; i++) {
    const r = client.addAlloc(quickBatch());
    await settled(r);
    out.push(r);
  }
  return out;
}

/** A service alloc that keeps running. */
export function longRunning(over: Partial<Allocation> = {}): Allocation {
  return makeAlloc([mockTask('web', { run_for: '1h' })], over);
}
