/**
 * The alloc chart's kill pipeline (Nomad's killTasks), defined once for a stop and a destroy,
 * and the `runHooks` input helper both use. Plain state configs the chart spreads in.
 * @module
 */
import type { AllocContext, AllocHookKind, RunHooksInput } from './context.ts';

type Ctx = AllocContext;

/** The `runHooks` input for one kind of hook. */
export const hooksOf =
  (kind: AllocHookKind) =>
  ({ context }: { context: Ctx }): RunHooksInput => ({ allocId: context.allocId, kind });

/**
 * The one kill pipeline (Nomad's killTasks), for a stop and a destroy alike: the group's
 * shutdown_delay (a stop only: a destroy skips every delay), the preKill hooks (their failure
 * only moves on), then the kill phases. The modes differ in the plan (a destroy lets a poststop
 * task that has not run yet run once) and in where a finished kill goes.
 */
export function killPipeline(mode: 'stop'): ReturnType<typeof stopKills>;
export function killPipeline(mode: 'destroy'): ReturnType<typeof destroyKills>;
export function killPipeline(mode: 'stop' | 'destroy') {
  return mode === 'stop' ? stopKills() : destroyKills();
}

/** The steps both modes share: preKill hooks, then the kill phases as tasks report. */
const TO_KILL = [{ guard: 'needsPreKill', target: 'preKillHooks' }, { target: 'killing' }] as const;
const PREKILL_HOOKS = {
  invoke: {
    id: 'prekill-hooks',
    src: 'runHooks',
    input: hooksOf('preKill'),
    onDone: { target: 'killing', actions: 'markPreKillDone' },
    onError: { target: 'killing', actions: 'markPreKillDone' },
  },
} as const;
const KILL_PHASES = { 'task.state': { actions: ['recordTaskState', 'updateStoppingGates', 'advanceKills'] } } as const;

const stopKills = () =>
  ({
    prekill: { always: [{ guard: 'groupDelayDue', target: 'groupDelay' }, ...TO_KILL] },
    groupDelay: {
      always: { guard: 'delaysSkipped', target: 'preKillHooks' },
      after: { groupShutdownDelay: { target: 'preKillHooks', actions: 'passGroupDelay' } },
    },
    preKillHooks: PREKILL_HOOKS,
    killing: { entry: ['planStopKills', 'advanceKills'], on: KILL_PHASES, always: { guard: 'killDone', target: 'poststop' } },
  }) as const;

const destroyKills = () =>
  ({
    prekill: { always: TO_KILL },
    preKillHooks: PREKILL_HOOKS,
    killing: {
      entry: ['markUnstartedDead', 'planDestroyKills', 'advanceKills', 'updateStoppingGates'],
      on: KILL_PHASES,
      always: [
        { guard: 'allDead', target: 'postrun' },
        { guard: 'killDone', target: 'poststop' },
      ],
    },
  }) as const;
