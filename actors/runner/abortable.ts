/**
 * A promise actor that a chart can abort without stopping it: `sendTo(id, { type: 'abort' })`
 * aborts the promise's signal, and the actor stays alive until the promise settles, so the chart
 * still gets `onDone` with what the effect left behind (say, a process that already exists).
 * Stopping the actor (leaving the state) aborts the signal too, as with `fromPromise`.
 * @module
 */
import { fromPromise, type PromiseActorLogic } from 'xstate';

/** The event that aborts an abortable promise actor's signal. */
export interface AbortEffectEvent {
  type: 'abort';
}

/** Like `fromPromise`, and an `{ type: 'abort' }` event aborts `signal` without stopping the actor. */
export function fromAbortablePromise<TOutput, TInput>(
  run: (args: { input: TInput; signal: AbortSignal }) => Promise<TOutput>,
): PromiseActorLogic<TOutput, TInput> {
  // One controller per running actor; the entry goes with the actor (weak key).
  const controllers = new WeakMap<object, AbortController>();
  const base = fromPromise<TOutput, TInput>(({ input, signal, self }) => {
    const ctl = new AbortController();
    controllers.set(self, ctl);
    return run({ input, signal: AbortSignal.any([signal, ctl.signal]) });
  });
  return {
    ...base,
    transition: (snapshot, event, scope) => {
      if ((event as { type: string }).type === 'abort') {
        controllers.get(scope.self)?.abort(new Error('aborted by its chart'));
        return snapshot;
      }
      return base.transition(snapshot, event, scope);
    },
  };
}
