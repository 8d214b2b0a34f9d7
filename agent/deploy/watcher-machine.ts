/**
 * One deployment as an actor (`deployment-<id>`), so the agent's viewer shows each rollout beside
 * the evaluations and allocs it drives:
 *
 * ```
 *  running ──deployment.updated (successful)──► successful
 *     │ ▲ ──deployment.updated (failed)────────► failed
 *     └─┘ ──deployment.updated (cancelled)─────► cancelled
 *   (counts)  ▲  │ (paused)
 *             │  ▼
 *   (resumed: running) paused ──(successful / failed / cancelled)──► successful / failed / cancelled
 * ```
 *
 * A paused deployment still counts its allocs' health, so its last healthy alloc can end it
 * successful while paused.
 *
 * It follows the deployment's committed record: the batch decisions (count an alloc's health,
 * end the deployment, ask for the next batch) are `recordHealth`'s, a pure policy in
 * deployments.ts, applied inside the same commit. Context is the record's counts (plain data).
 * @module
 */
import { assign, setup } from 'xstate';

/** A deployment's counts over all its groups. */
export interface DeploymentCounts {
  desiredTotal: number;
  placedAllocs: number;
  healthyAllocs: number;
  unhealthyAllocs: number;
}

/** What a deployment actor starts with. */
export interface DeploymentActorInput extends DeploymentCounts {
  deploymentId: string;
  jobId: string;
  jobVersion: number;
}

/** The deployment's record changed (a batch placed, an alloc's health counted, its end). */
export interface DeploymentUpdated extends DeploymentCounts {
  type: 'deployment.updated';
  status: 'running' | 'successful' | 'failed' | 'cancelled' | 'paused';
  statusDescription: string;
}

/** See the module doc. */
export const deploymentMachine = setup({
  types: {} as { context: DeploymentActorInput & { statusDescription: string }; input: DeploymentActorInput; events: DeploymentUpdated },
  actions: {
    counts: assign(({ event }) => ({
      desiredTotal: event.desiredTotal,
      placedAllocs: event.placedAllocs,
      healthyAllocs: event.healthyAllocs,
      unhealthyAllocs: event.unhealthyAllocs,
      statusDescription: event.statusDescription,
    })),
  },
}).createMachine({
  id: 'deployment',
  context: ({ input }) => ({ ...input, statusDescription: 'Deployment is running' }),
  initial: 'running',
  states: {
    running: {
      on: {
        'deployment.updated': [
          { guard: ({ event }) => event.status === 'successful', target: 'successful', actions: 'counts' },
          { guard: ({ event }) => event.status === 'failed', target: 'failed', actions: 'counts' },
          { guard: ({ event }) => event.status === 'cancelled', target: 'cancelled', actions: 'counts' },
          { guard: ({ event }) => event.status === 'paused', target: 'paused', actions: 'counts' },
          { actions: 'counts' },
        ],
      },
    },
    paused: {
      on: {
        'deployment.updated': [
          { guard: ({ event }) => event.status === 'running', target: 'running', actions: 'counts' },
          { guard: ({ event }) => event.status === 'successful', target: 'successful', actions: 'counts' },
          { guard: ({ event }) => event.status === 'failed', target: 'failed', actions: 'counts' },
          { guard: ({ event }) => event.status === 'cancelled', target: 'cancelled', actions: 'counts' },
          { actions: 'counts' },
        ],
      },
    },
    successful: { type: 'final' },
    failed: { type: 'final' },
    cancelled: { type: 'final' },
  },
});
