/**
 * `berth run`'s exit code from how the allocation ended: the signal that stopped it (130/143),
 * else, for a single-task batch allocation, the task's own exit code, else 0 for complete and 1
 * for failed.
 * @module
 */
import { constants } from 'node:os';
import type { Allocation } from '../../../model/types.ts';
import { ExitCode, signalExitCode } from '../exit-codes.ts';

/** The exit code of `berth run` for an allocation that reached a terminal client status. */
export function runExitCode(alloc: Allocation, stoppedBy: 'SIGINT' | 'SIGTERM' | undefined): number {
  if (stoppedBy) return signalExitCode(stoppedBy);
  const group = alloc.job.taskGroups.find((g) => g.name === alloc.taskGroup);
  const batch = alloc.job.type === 'batch' || alloc.job.type === 'sysbatch';
  if (batch && group?.tasks.length === 1) {
    const code = taskExitCode(alloc, group.tasks[0]!.name);
    if (code !== undefined) return code;
  }
  return alloc.clientStatus === 'complete' ? ExitCode.ok : ExitCode.failed;
}

/** The exit code of a task's last `Terminated` event (128 + signal when a signal ended it). */
export function taskExitCode(alloc: Allocation, task: string): number | undefined {
  const events = alloc.taskStates?.[task]?.events ?? [];
  const last = [...events].reverse().find((e) => e.type === 'Terminated');
  if (!last) return undefined;
  const code = Number(last.details.exit_code ?? '0');
  const sig = last.details.signal;
  if (sig && sig !== '0') {
    const num = /^\d+$/.test(sig) ? Number(sig) : constants.signals[sig as keyof typeof constants.signals];
    if (num) return 128 + num;
  }
  return Number.isInteger(code) && code >= 0 && code < 256 ? code : ExitCode.failed;
}
