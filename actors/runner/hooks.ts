/**
 * Alloc-runner hooks: extra work a host plugs into every allocation's lifecycle, run after the
 * built-in hooks (alloc dir, await previous, migrate disk), as in Nomad's runner.
 *
 * | kind           | when                                                        | errors                        |
 * |----------------|-------------------------------------------------------------|-------------------------------|
 * | prerun         | in `running`, before tasks (sees migrated data)             | first error fails the alloc   |
 * | update         | non-terminal updates only (never for a stop)                | all run; errors go on the bus |
 * | preKill        | before the first task is killed (stop, destroy,             | all run; errors go on the bus |
 * |                | max_run_duration), after the group's shutdown_delay wait    |                               |
 * |                | begins; also once every task died by itself                 |                               |
 * | postrun        | after every task exited (an alloc that arrived terminal too)| all run; errors go on the bus |
 * | destroy        | during destroy                                              | all run; errors go on the bus |
 * | shutdown       | `client.shutdown()`: the tasks are left running             | all run; errors go on the bus |
 * | preTaskRestart | before `restartAll` / `restartRunning` (not `restartTask`)  | all run; errors go on the bus |
 *
 * Every kind runs the hooks in the order they were given, as Nomad runs its hook list.
 * @module
 */
import type { AllocDirHandle } from '../allocdir/handle.ts';
import type { Allocation } from '../../model/types.ts';
import type { HookKind } from '../../model/hook-kind.ts';
import { errorText } from '../../model/error-text.ts';

/** What a hook sees. `signal` aborts when the alloc is destroyed (or the step is cancelled). */
export interface HookContext {
  alloc: Allocation;
  allocDir: AllocDirHandle;
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
  /** Before tasks are killed (Nomad's RunnerPreKillHook). */
  preKill?(ctx: HookContext): Promise<void>;
  /** After every task exited; errors go on the bus as `hook.error`. */
  postrun?(ctx: HookContext): Promise<void>;
  /** While the allocation is destroyed, before its dir is removed; errors go on the bus. */
  destroy?(ctx: HookContext): Promise<void>;
  /** The client shuts down and leaves the tasks running (Nomad's ShutdownHook). */
  shutdown?(ctx: HookContext): Promise<void>;
  /** Before a restart of one or every task (Nomad's RunnerTaskRestartHook). */
  preTaskRestart?(ctx: HookContext): Promise<void>;
}

export type { HookKind } from '../../model/hook-kind.ts';

const LABELS: Record<HookKind, string> = {
  prerun: 'pre-run',
  update: 'update',
  preKill: 'pre-kill',
  postrun: 'post-run',
  destroy: 'destroy',
  shutdown: 'shutdown',
  preTaskRestart: 'pre-task-restart',
};

/** Nomad's wording for a failed hook of each kind. */
export function hookErrorMessage(kind: HookKind, name: string, err: unknown): string {
  return `${LABELS[kind]} hook ${JSON.stringify(name)} failed: ${errorText(err)}`;
}

/**
 * Runs `kind` on every hook in order. prerun stops at the first failure and rejects with it;
 * the other kinds run every hook and return every failure.
 */
export async function runHooks(
  hooks: readonly RunnerHook[],
  kind: HookKind,
  ctx: HookContext,
  onError: (hook: string, message: string) => void,
): Promise<string[]> {
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
