/**
 * Placeholders for the actors a chart names in `setup()` but leaves to its runtime: started
 * without being provided, they fail with a {@link MissingActorError} naming the chart and the
 * actor, instead of xstate dereferencing `null`.
 * @module
 */
import type { ActorLogic, AnyActorLogic, EventObject, Snapshot } from 'xstate';
import { MissingActorError } from '../model/errors.ts';

/** A logic that fails with {@link MissingActorError} as soon as an actor of it is created. */
export function missingActor<T extends AnyActorLogic = AnyActorLogic>(machine: string, actor: string): T {
  const logic: ActorLogic<Snapshot<unknown>, EventObject, unknown> = {
    transition: (snapshot) => snapshot,
    getInitialSnapshot: () => {
      throw new MissingActorError(machine, actor);
    },
    getPersistedSnapshot: (snapshot) => snapshot,
  };
  return logic as unknown as T;
}
