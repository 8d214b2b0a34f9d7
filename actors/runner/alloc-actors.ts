/**
 * The alloc machine's effect actors: build the alloc dir, await previous allocs, migrate data,
 * run hooks. Each looks its runner's handles up in the runtime registry by alloc id.
 * @module
 */
import { join } from 'node:path';
import { fromCallback, fromPromise } from 'xstate';
import { AllocDirInaccessibleError } from '../../model/errors.ts';
import { runHooks, type HookKind } from './hooks.ts';
import { migrateData } from '../migrate/migrate.ts';
import { trackInFlight } from '../allocdir/in-flight.ts';
import { createWatcherLogic } from '../watchers/group.ts';
import { runnerOf, type Runtime, type RunnerInternals } from './runtime.ts';
import type { MigrateDataInput, RunHooksInput } from '../../machines/alloc/index.ts';
import { errorText } from '../../model/error-text.ts';

const lookup = runnerOf;

/**
 * Registers `work` (which touches the alloc dir) in the runner's in-flight set until it settles:
 * the destroy hook waits for it before removing the dir, so an effect whose state was left (a
 * destroy during the build, say) never re-creates files in a removed alloc dir.
 */
const tracked = <T>(r: RunnerInternals, work: Promise<T>): Promise<T> => trackInFlight(r.copiesOut, work);

/** Builds the alloc-level actors for a runtime. */
export function allocActors(rt: Runtime) {
  /**
   * Builds the alloc dir. A restored alloc's dir must still be there (Nomad's Restore): if it is
   * gone or cannot be reached (an ephemeral disk after a reboot), that is an error, never a
   * silent rebuild.
   */
  const buildAllocDir = fromPromise<void, { allocId: string; restoring?: boolean }>(async ({ input }) => {
    const r = lookup(rt, input.allocId);
    if (input.restoring) {
      try {
        await r.allocDir.accessible();
      } catch (e) {
        throw new AllocDirInaccessibleError(`allocation directory is inaccessible: ${errorText(e)}`, { cause: e });
      }
    }
    await tracked(r, r.allocDir.build());
  });

  /**
   * The max_run_duration timer: fires `maxRunDuration.elapsed` at `deadline` (at once when it
   * has passed); an `arm` event moves it (or, with no deadline, disarms it).
   */
  const maxRunTimer = fromCallback<{ type: 'arm'; deadline?: number }, { deadline?: number }>(({ input, sendBack, receive }) => {
    let timer: unknown;
    const arm = (deadline: number | undefined) => {
      if (timer !== undefined) rt.clock.clearTimeout(timer);
      timer = undefined;
      if (deadline === undefined) return;
      // Timers hold at most ~24.8 days: a later deadline is reached in steps.
      timer = rt.clock.setTimeout(
        () => {
          timer = undefined;
          if (rt.clock.now() < deadline) return arm(deadline);
          sendBack({ type: 'maxRunDuration.elapsed', deadline, time: rt.clock.now() });
        },
        Math.min(2 ** 31 - 1, Math.max(0, deadline - rt.clock.now())),
      );
    };
    arm(input.deadline);
    receive((e) => arm(e.deadline));
    return () => {
      if (timer !== undefined) rt.clock.clearTimeout(timer);
    };
  });

  // The watcher's children find their handles through this alloc's runner.
  const awaitPrevious = createWatcherLogic((_self, context) => {
    const r = lookup(rt, context.allocId);
    return {
      ...(r.previousRunner ? { previousRunner: r.previousRunner } : {}),
      ...(r.preemptedRunners ? { preemptedRunners: r.preemptedRunners } : {}),
      ...(rt.rpc ? { rpc: rt.rpc } : {}),
      ...(rt.retry ? { retry: rt.retry } : {}),
      bus: rt.bus,
      clock: rt.clock,
      random: rt.random,
    };
  });

  const migrate = fromPromise<void, MigrateDataInput>(async ({ input, signal }) => {
    await migrateData(rt, lookup(rt, input.allocId), input.plan, signal);
  });

  const hooks = fromPromise<void, RunHooksInput>(async ({ input, signal }) => {
    const r = lookup(rt, input.allocId);
    const publish = (kind: HookKind) => (hook: string, error: string) => rt.bus.publish('hook.error', { allocId: r.allocId, hook, kind, error });
    if (input.kind === 'destroy') {
      // Every destroy hook runs; each failure is reported, none stops the others. The alloc dir
      // goes last so the host's hooks still see it, and only after copies out of it finished.
      const ctx = { alloc: r.clientAlloc(), allocDir: r.allocDir, signal };
      await runHooks(r.hooks, 'destroy', ctx, publish('destroy'));
      await Promise.allSettled([...r.copiesOut]);
      try {
        await r.allocDir.destroy();
      } catch (e) {
        publish('destroy')('alloc_dir', `destroy hook "alloc_dir" failed: ${errorText(e)}`);
      }
      // <dataDir>/client/tasks/<allocId>: empty by now (each task's state dir went with its exit).
      await rt.fs.rmdir(join(rt.dataDir, 'client', 'tasks', r.allocId)).catch(() => undefined);
      return;
    }
    const ctx = { alloc: r.clientAlloc(), allocDir: r.allocDir, signal: AbortSignal.any([signal, r.destroySignal]) };
    await tracked(r, runHooks(r.hooks, input.kind, ctx, publish(input.kind)));
  });

  return { buildAllocDir, awaitPrevious, migrateData: migrate, runHooks: hooks, maxRunTimer };
}
