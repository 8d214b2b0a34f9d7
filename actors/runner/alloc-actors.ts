/**
 * The alloc machine's effect actors: build the alloc dir, await previous allocs, migrate data,
 * run hooks. Each looks its runner's handles up in the runtime registry by alloc id.
 * @module
 */
import { join } from 'node:path';
import { fromPromise } from 'xstate';
import { BerthError } from '../../model/errors.ts';
import { runHooks, type HookKind } from './hooks.ts';
import { migrateData } from '../migrate/migrate.ts';
import { createWatcherLogic } from '../watchers/group.ts';
import type { Runtime, RunnerInternals } from './runtime.ts';

const lookup = (rt: Runtime, allocId: string): RunnerInternals => {
  const r = rt.registry.get(allocId);
  if (!r) throw new BerthError(`no runner for allocation ${allocId}`);
  return r;
};

/**
 * Registers `work` (which touches the alloc dir) in the runner's in-flight set until it settles:
 * the destroy hook waits for it before removing the dir, so an effect whose state was left (a
 * destroy during the build, say) never re-creates files in a removed alloc dir.
 */
function tracked<T>(r: RunnerInternals, work: Promise<T>): Promise<T> {
  const settled = work.then(() => undefined, () => undefined);
  r.copiesOut.add(settled);
  void settled.then(() => r.copiesOut.delete(settled));
  return work;
}

/** Builds the alloc-level actors for a runtime. */
export function allocActors(rt: Runtime) {
  const buildAllocDir = fromPromise<void, { allocId: string }>(async ({ input }) => {
    const r = lookup(rt, input.allocId);
    await tracked(r, r.allocDir.build());
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

  const migrate = fromPromise<void, { allocId: string; previousNodeId?: string }>(async ({ input, signal }) => {
    await migrateData(rt, lookup(rt, input.allocId), input.previousNodeId, signal);
  });

  const hooks = fromPromise<void, { allocId: string; kind: 'prerun' | 'update' | 'postrun' | 'destroy' }>(async ({ input, signal }) => {
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
        publish('destroy')('alloc_dir', `destroy hook "alloc_dir" failed: ${(e as Error).message}`);
      }
      // <dataDir>/client/tasks/<allocId>: empty by now (each task's state dir went with its exit).
      await rt.fs.rmdir(join(rt.dataDir, 'client', 'tasks', r.allocId)).catch(() => undefined);
      return;
    }
    const ctx = { alloc: r.clientAlloc(), allocDir: r.allocDir, signal: AbortSignal.any([signal, r.destroySignal]) };
    await tracked(r, runHooks(r.hooks, input.kind, ctx, publish(input.kind)));
  });

  return { buildAllocDir, awaitPrevious, migrateData: migrate, runHooks: hooks };
}
