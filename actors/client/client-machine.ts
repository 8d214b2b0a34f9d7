/**
 * The client's own small statechart: it counts the allocations and ends at shutdown, so the
 * inspector shows the client beside its allocs.
 * @module
 */
import { setup } from 'xstate';

/** A tiny statechart for the client itself, so the inspector shows it. */
export const clientMachine = setup({
  types: { events: {} as { type: 'alloc.added' | 'alloc.removed' | 'shutdown' }, context: {} as { allocs: number } },
}).createMachine({
  id: 'client',
  context: { allocs: 0 },
  initial: 'running',
  states: {
    running: {
      on: {
        'alloc.added': { actions: ({ context }) => void context.allocs++ },
        'alloc.removed': { actions: ({ context }) => void context.allocs-- },
        shutdown: 'shutdown',
      },
    },
    shutdown: { type: 'final' },
  },
});
