/**
 * Stub actors for driving the pure charts alone: each call of a stub is recorded with its input
 * and its abort signal and settles only when the spec says so.
 */
import { fromPromise, type PromiseActorLogic } from 'xstate';

/** One call of a stub actor. */
export interface StubCall<I, O> {
  input: I;
  signal: AbortSignal;
  resolve(out: O): void;
  reject(err: unknown): void;
}

/** A promise-actor stub: `calls` fills as the chart invokes it. */
export function stub<O, I = any>(): { logic: PromiseActorLogic<O, any>; calls: Array<StubCall<I, O>>; last(): StubCall<I, O> } {
  const calls: Array<StubCall<I, O>> = [];
  const logic = fromPromise<O, I>(({ input, signal }) => new Promise<O>((resolve, reject) => calls.push({ input, signal, resolve, reject })));
  return {
    logic,
    calls,
    last() {
      const c = calls[calls.length - 1];
      if (!c) throw new Error('stub was never called');
      return c;
    },
  };
}

/** Lets promise callbacks and the actors' reactions to them run. */
export const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};
