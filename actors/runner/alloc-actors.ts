/**
 * The alloc machine's effect actors: build the alloc dir, await previous allocs, migrate data,
 * run hooks. Each looks its runner's handles up in the runtime registry by alloc id.
 * @module
 */
import { rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fromPromise, type AnyActorLogic } from 'xstate';
import { BerthError } from '../../model/errors.ts';
import { runHooks, type HookKind } from './hooks.ts';
import { migrateData } from '../migrate/migrate.ts';
import { allocWatcherLogic, type AllocWatcherInput } from '../watchers/index.ts';
import type { Runtime, RunnerInternals } from './runtime.ts';

const lookup = (rt: Runtime, allocId: string): RunnerInternals => {
  const r = rt.registry.get(allocId);
  if (!r) throw new BerthError(`no runner for allocation ${allocId}`);
  return r;
};

/**
 * A logic identical to `logic` except that its input is computed from the given one: how a
 * pure machine that only knows an alloc id invokes a logic that needs handles.
 */
export function withMappedInput<T extends AnyActorLogic>(logic: T, map: (input: unknown) => unknown): T {
  const derived = Object.create(logic) as T;
  derived.getInitialSnapshot = ((scope: unknown, input: unknown) => (logic.getInitialSnapshot as (...a: unknown[]) => unknown).call(derived, scope, map(input))) as T['getInitialSnapshot'];
  return derived;
}

/** Builds the alloc-level actors for a runtime. */
export function allocActors(rt: Runtime) {
  const buildAllocDir = fromPromise<void, { allocId: string }>(async ({ input }) => {
    await lookup(rt, input.allocId).allocDir.build();
  });

  const awaitPrevious = withMappedInput(allocWatcherLogic, (input) => {
    const { allocId } = input as { allocId: string };
    const r = lookup(rt, allocId);
    const watcherInput: AllocWatcherInput = {
      alloc: r.serverAlloc(),
      ...(r.previousRunner ? { previousRunner: r.previousRunner } : {}),
      ...(r.preemptedRunners ? { preemptedRunners: r.preemptedRunners } : {}),
      ...(rt.rpc ? { rpc: rt.rpc } : {}),
      ...(rt.retry ? { retry: rt.retry } : {}),
      bus: rt.bus,
      clock: rt.clock,
      random: rt.random,
    };
    return watcherInput;
  });

  const migrate = fromPromise<void, { allocId: string; previousNodeId?: string }>(async ({ input, signal }) => {
    await migrateData(rt, lookup(rt, input.allocId), input.previousNodeId, signal);
  });

  const hooks = fromPromise<void, { allocId: string; kind: 'prerun' | 'postrun' | 'destroy' }>(async ({ input, signal }) => {
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
      await rmdir(join(rt.dataDir, 'client', 'tasks', r.allocId)).catch(() => undefined);
      return;
    }
    const ctx = { alloc: r.clientAlloc(), allocDir: r.allocDir, signal: AbortSignal.any([signal, r.destroySignal]) };
    await runHooks(r.hooks, input.kind, ctx, publish(input.kind));
  });

  return { buildAllocDir, awaitPrevious, migrateData: migrate, runHooks: hooks };
}
