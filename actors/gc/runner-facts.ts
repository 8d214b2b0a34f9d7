/**
 * The one place the collector looks past a runner's public API: whether its machine has come to
 * rest in `stopping.stopped` (kills, poststop tasks and postrun hooks all done), so a destroy
 * cuts nothing short, and when it does.
 * @module
 */
import type { AllocRunner } from '../runner/api.ts';

type Snap = { matches(value: unknown): boolean };
type WithActor = { actor?: { getSnapshot(): Snap; subscribe(o: { next(s: Snap): void; complete(): void; error(): void }): { unsubscribe(): void } } };

/** The runner rests in `stopping` with nothing left to run. */
export function isSettled(r: AllocRunner): boolean {
  if (r.state() !== 'stopping') return false;
  const actor = (r as AllocRunner & WithActor).actor;
  // A runner without a machine to ask (a host's own implementation) is taken at its word.
  return actor ? actor.getSnapshot().matches({ stopping: 'stopped' }) : true;
}

/**
 * Calls `then` once the runner has settled (or its machine stopped first: then never). Returns
 * a cancel. Event-driven: it subscribes to the runner's machine, no polling.
 */
export function onSettled(r: AllocRunner, then: () => void): () => void {
  if (isSettled(r)) {
    then();
    return () => undefined;
  }
  const actor = (r as AllocRunner & WithActor).actor;
  if (!actor) return () => undefined;
  let done = false;
  const sub = actor.subscribe({
    next: (s) => {
      if (done || !s.matches({ stopping: 'stopped' })) return;
      done = true;
      queueMicrotask(() => sub.unsubscribe());
      then();
    },
    complete: () => void (done = true),
    error: () => void (done = true),
  });
  return () => {
    done = true;
    sub.unsubscribe();
  };
}
