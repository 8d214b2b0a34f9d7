/**
 * Alloc-runner hooks: extra work a host plugs into every allocation's lifecycle, run after the
 * built-in hooks (alloc dir, await previous, migrate disk), as in Nomad's runner.
 *
 * | kind    | when                                            | errors                              |
 * |---------|-------------------------------------------------|-------------------------------------|
 * | prerun  | in `running`, before tasks (sees migrated data) | first error fails the alloc         |
 * | update  | non-terminal updates only (never for a stop)    | all run; errors go on the bus       |
 * | postrun | after every task exited                         | all run; errors go on the bus       |
 * | destroy | during destroy                                  | all run; errors go on the bus       |
 * @module
 */
import type { AllocDir } from '../allocdir/index.ts';
import type { Allocation } from '../../model/types.ts';

/** What a hook sees. `signal` aborts when the alloc is destroyed (or the step is cancelled). */
export interface HookContext {
  alloc: Allocation;
  allocDir: AllocDir;
  signal: AbortSignal;
}

/** An alloc-runner hook; every method is optional. */
export interface RunnerHook {
  /** Used in error messages and bus messages. */
  name: string;
  /** Before the tasks start (after the alloc dir, the wait and the migration); an error fails the alloc. */
  prerun?(ctx: HookContext): Promise<void>;
  /** On a non-terminal update; never called for a stopping (terminal) update. */
  update?(ctx: HookContext): Promise<void>;
  /** After every task exited; errors go on the bus as `hook.error`. */
  postrun?(ctx: HookContext): Promise<void>;
  /** While the allocation is destroyed, before its dir is removed; errors go on the bus. */
  destroy?(ctx: HookContext): Promise<void>;
}

/** The hook kinds. */
export type HookKind = 'prerun' | 'update' | 'postrun' | 'destroy';

/** Nomad's wording for a failed hook of each kind. */
export function hookErrorMessage(kind: HookKind, name: string, err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  const label = kind === 'prerun' ? 'pre-run' : kind === 'postrun' ? 'post-run' : kind;
  return `${label} hook ${JSON.stringify(name)} failed: ${msg}`;
}

/**
 * Runs `kind` on every hook in order. prerun stops at the first failure and rejects with it;
 * the other kinds run every hook and return every failure.
 */
export async function runHooks(hooks: readonly RunnerHook[], kind: HookKind, ctx: HookContext, onError: (hook: string, message: string) => void): Promise<string[]> {
  const errors: string[] = [];
  for (const h of hooks) {
    const fn = h[kind];
    if (!fn) continue;
    try {
      await fn.call(h, ctx);
    } catch (e) {
      const message = hookErrorMessage(kind, h.name, e);
      onError(h.name, message);
      if (kind === 'prerun') throw new Error(message);
      errors.push(message);
    }
  }
  return errors;
}
