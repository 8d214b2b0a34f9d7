/**
 * What an allocation came to, once it is over: its final client status and how each task ended.
 * `runner.done()` resolves with it.
 * @module
 */
import { isClientTerminalStatus } from './status.ts';
import type { Allocation } from './types.ts';

/** How one task ended. */
export interface TaskResult {
  state: 'dead';
  failed: boolean;
  /** The last exit's code, when the task ever exited. */
  exitCode?: number;
  /** The signal that ended the last run (0: none), when the task ever exited. */
  signal?: number;
  /** The kernel's OOM killer ended the last run. */
  oomKilled: boolean;
  restarts: number;
  startedAt?: number;
  finishedAt?: number;
}

/** An allocation's outcome. */
export interface AllocResult {
  clientStatus: 'complete' | 'failed' | 'lost';
  tasks: Record<string, TaskResult>;
}

/** The outcome of a client view, or undefined while it is not over (not client-terminal, or a task still lives). */
export function allocResult(alloc: Allocation): AllocResult | undefined {
  const status = alloc.clientStatus;
  if (!isClientTerminalStatus(status)) return undefined;
  const states = alloc.taskStates ?? {};
  if (Object.values(states).some((s) => s.state !== 'dead')) return undefined;
  const tasks: Record<string, TaskResult> = {};
  for (const [name, s] of Object.entries(states)) {
    tasks[name] = {
      state: 'dead',
      failed: s.failed,
      ...(s.exitCode !== undefined ? { exitCode: s.exitCode } : {}),
      ...(s.signal !== undefined ? { signal: s.signal } : {}),
      oomKilled: s.oomKilled === true,
      restarts: s.restarts,
      ...(s.startedAt !== undefined ? { startedAt: s.startedAt } : {}),
      ...(s.finishedAt !== undefined ? { finishedAt: s.finishedAt } : {}),
    };
  }
  return { clientStatus: status as AllocResult['clientStatus'], tasks };
}
