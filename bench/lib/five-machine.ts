/** The floor's machine, shared by the benchmarks: five states, four transitions. @module */
import { createMachine } from 'xstate';

/** A bare five-state machine driven by `next` events. */
export const five = createMachine({
  id: 'five',
  initial: 'pending',
  states: {
    pending: { on: { next: 'waiting' } },
    waiting: { on: { next: 'running' } },
    running: { on: { next: 'stopping' } },
    stopping: { on: { next: 'destroyed' } },
    destroyed: { type: 'final' },
  },
});
