/**
 * One evaluation as the broker processes it, as an actor (`eval-<id>`) so the agent's viewer shows
 * it beside the allocs it places:
 *
 * ```
 *  scheduling ──done──► complete
 *      │
 *      └──error──► recordingFailure ──► failed     (the evaluation is committed as failed)
 * ```
 *
 * The chart decides; the broker provides the two effects: `schedule` (plan, commit, hand the
 * client its allocs; resolves with a one-line outcome) and `recordFailure` (commits the
 * evaluation as failed with the error's text).
 * @module
 */
import { assign, fromPromise, setup } from 'xstate';

/** What an evaluation actor starts with. */
export interface EvalActorInput {
  evalId: string;
  jobId: string;
  triggeredBy: string;
}

/** An evaluation actor's context (plain data). */
export interface EvalActorContext extends EvalActorInput {
  /** The outcome line once scheduled ("2 placed, 0 stopped"), or the error's text once failed. */
  outcome: string;
}

const provided = (name: string) => fromPromise<string, { evalId: string; error?: string }>(() => Promise.reject(new Error(`${name}: provided by the broker`)));

/** See the module doc. */
export const evalMachine = setup({
  types: {} as { context: EvalActorContext; input: EvalActorInput },
  actors: { schedule: provided('schedule'), recordFailure: provided('recordFailure') },
}).createMachine({
  id: 'evaluation',
  context: ({ input }) => ({ ...input, outcome: '' }),
  initial: 'scheduling',
  states: {
    scheduling: {
      invoke: {
        src: 'schedule',
        input: ({ context }) => ({ evalId: context.evalId }),
        onDone: { target: 'complete', actions: assign({ outcome: ({ event }) => event.output }) },
        onError: { target: 'recordingFailure', actions: assign({ outcome: ({ event }) => (event.error as Error)?.message ?? String(event.error) }) },
      },
    },
    recordingFailure: {
      invoke: {
        src: 'recordFailure',
        input: ({ context }) => ({ evalId: context.evalId, error: context.outcome }),
        onDone: 'failed',
        onError: 'failed',
      },
    },
    complete: { type: 'final' },
    failed: { type: 'final' },
  },
});
