/**
 * Per-task static settings the machines need, derived from the allocation (pure).
 * @module
 */
import type { Allocation } from '../../model/types.ts';
import { taskGroupOf } from '../../model/status.ts';
import type { TaskMachineInput } from '../task/index.ts';

/** Per-task static settings the runtime computes once (plain data). */
export type TaskSettings = Omit<TaskMachineInput, 'initialState' | 'gateOpen' | 'now'>;
import { effectivePolicy, restartsOnSuccess } from './restarts.ts';
import { taskRoles, type TaskRole } from './task-roles.ts';

/** Nomad's default task kill timeout. */
export const DEFAULT_KILL_TIMEOUT_MS = 5000;
/** Nomad's default client max kill timeout. */
export const DEFAULT_MAX_KILL_TIMEOUT_MS = 30_000;

/** Roles and settings of every task in the alloc's group. */
export function taskSettingsFor(alloc: Allocation, maxKillTimeoutMs = DEFAULT_MAX_KILL_TIMEOUT_MS): { roles: TaskRole[]; tasks: Record<string, TaskSettings> } {
  const group = taskGroupOf(alloc);
  const roles = taskRoles(group.tasks);
  const tasks: Record<string, TaskSettings> = {};
  for (const [i, t] of group.tasks.entries()) {
    tasks[t.name] = {
      allocId: alloc.id,
      taskName: t.name,
      role: roles[i]!,
      restart: { policy: effectivePolicy(alloc.job.type, t, group.restartPolicy), onSuccess: restartsOnSuccess(alloc.job.type, t) },
      killTimeoutMs: Math.min(t.killTimeoutMs ?? DEFAULT_KILL_TIMEOUT_MS, maxKillTimeoutMs),
      killSignal: t.killSignal ?? 'SIGINT',
      shutdownDelayMs: t.shutdownDelayMs ?? 0,
      ...(t.artifacts?.length || t.templates?.length ? { hooks: { prestart: true, ...(t.templates?.length ? { templates: true } : {}) } } : {}),
    };
  }
  return { roles, tasks };
}
