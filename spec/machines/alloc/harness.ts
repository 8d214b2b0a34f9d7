import { createActor, fromCallback, SimulatedClock, type AnyActorRef } from 'xstate';
import { allocMachine, type AllocHookKind, type AllocMachineInput } from '../../../machines/alloc/index.ts';
import { taskSettingsFor } from '../../../machines/policy/task-settings.ts';
import { taskMachine, type ExitOutput, type RecoverOutput, type StartOutput } from '../../../machines/task/index.ts';
import type { Allocation } from '../../../model/types.ts';
import { chartCoverage } from '../../support/chart-coverage.ts';
import { flush, stub } from '../support/charts.ts';

/** One max_run_duration timer child the chart spawned: its input, what it was sent, whether it was stopped. */
export interface TimerChild {
  input: { deadline?: number };
  got: unknown[];
  stopped: boolean;
}

/**
 * The alloc chart with the real task chart over stub effects, on a simulated clock: every effect
 * call waits for the spec to settle it; timer children are recorded.
 */
export function harness(a: Allocation, over: Partial<AllocMachineInput> = {}) {
  const build = stub<void, { allocId: string; restoring?: boolean }>();
  const awaitPrev = stub<{ previousNodeId?: string } | undefined>();
  const migrate = stub<void>();
  const hooks = stub<void, { allocId: string; kind: AllocHookKind }>();
  const start = stub<StartOutput>();
  const wait = stub<ExitOutput>();
  const kill = stub<ExitOutput>();
  const recover = stub<RecoverOutput>();
  const timers: TimerChild[] = [];
  const maxRunTimer = fromCallback<{ type: string }, { deadline?: number }>(({ input, receive }) => {
    const t: TimerChild = { input, got: [], stopped: false };
    timers.push(t);
    receive((e) => t.got.push(e));
    return () => {
      t.stopped = true;
    };
  });
  const task = taskMachine.provide({ actors: { startTask: start.logic, waitTask: wait.logic, killTask: kill.logic, recoverTask: recover.logic } });
  const logic = allocMachine.provide({
    actors: { buildAllocDir: build.logic, awaitPrevious: awaitPrev.logic, migrateData: migrate.logic, runHooks: hooks.logic, task, maxRunTimer } as never,
  });
  const { roles, tasks } = taskSettingsFor(a);
  const clock = new SimulatedClock();
  const actor = createActor(logic, {
    clock,
    inspect: chartCoverage.observe,
    input: { alloc: a, roles, tasks, now: 0, hasWatched: !!a.previousAllocation, ...over },
  }).start();
  const hook = (kind: AllocHookKind) => {
    const c = [...hooks.calls].reverse().find((x) => x.input.kind === kind);
    if (!c) throw new Error(`no ${kind} hook call`);
    return c;
  };
  return {
    actor,
    clock,
    build,
    awaitPrev,
    migrate,
    hooks,
    hook,
    /** The kinds of hooks run so far, in order. */
    hookKinds: () => hooks.calls.map((c) => c.input.kind),
    start,
    wait,
    kill,
    recover,
    timers,
    value: () => JSON.stringify(actor.getSnapshot().value),
    ctx: () => actor.getSnapshot().context,
    child: (id: string) => actor.getSnapshot().children[id] as AnyActorRef | undefined,
    async toRunning() {
      build.last().resolve();
      await flush();
      migrate.last().resolve();
      await flush();
      hook('prerun').resolve();
      await flush();
      // Every task started so far starts (resolving one twice changes nothing).
      for (const c of start.calls) {
        const name = (c.input as { taskName?: string }).taskName ?? 'web';
        c.resolve({ ok: true, handle: { driver: 'stub', id: `${a.id}/${name}/1`, config: {} as never, startedAt: 0, pid: 1, state: {} }, time: 1 });
      }
      await flush();
    },
  };
}
