/**
 * The one place the collector looks past a runner's public API: whether its machine has come to
 * rest in `stopping.stopped` (kills, poststop tasks and postrun hooks all done), so a destroy
 * cuts nothing short.
 * @module
 */
import type { AllocRunner } from '../runner/api.ts';

type WithActor = { actor?: { getSnapshot(): { matches(value: unknown): boolean } } };

/** The runner rests in `stopping` with nothing left to run. */
export function isSettled(r: AllocRunner): boolean {
  if (r.state() !== 'stopping') return false;
  const actor = (r as AllocRunner & WithActor).actor;
  // A runner without a machine to ask (a host's own implementation) is taken at its word.
  return actor ? actor.getSnapshot().matches({ stopping: 'stopped' }) : true;
}
