/**
 * The alloc chart's kill pipeline (Nomad's killTasks), defined once for a stop and a destroy,
 * and the hook-running state every hook phase uses. Plain state configs the chart spreads in.
 * @module
 */
import type { AllocContext, AllocHookKind, RunHooksInput } from './context.ts';

type Ctx = AllocContext;

/** The `runHooks` input for one kind of hook. */
export const hooksOf =
  (kind: AllocHookKind) =>
  ({ context }: { context: Ctx }): RunHooksInput => ({ allocId: context.allocId, kind });

/**
 * A state that runs one kind of host hooks (actor `id`) and then goes to `next` whether they
 * succeed or fail: past the prerun phase a hook's failure never holds the alloc where it is.
 */
export const runHooksThen = <const N>(id: string, kind: AllocHookKind, next: N) =>
  ({ invoke: { id, src: 'runHooks', input: hooksOf(kind), onDone: next, onError: next } }) as const;

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
const PREKILL_HOOKS = runHooksThen('prekill-hooks', 'preKill', { target: 'killing', actions: 'markPreKillDone' });
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
