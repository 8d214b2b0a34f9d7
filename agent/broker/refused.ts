/**
 * An allocation the client refused to run (Nomad's client `makeFailedAlloc`): it fails at once
 * with the client's reason as its description, and, so `alloc status` and `job run` show why,
 * a `Setup Failure` event on each task that never started. Pure.
 * @module
 */
import { taskEvent, TaskEventType, type Allocation, type TaskState } from '../../index.ts';

/** Nomad's client description for an alloc it could not add. */
export const refusedDescription = (reason: string) => `Unable to add allocation due to error: ${reason}`;

/** The client's report for `alloc` after it refused it for `reason` at `now` (ms). */
export function refusedAlloc(alloc: Allocation, reason: string, now: number): Allocation {
  const group = alloc.job.taskGroups.find((g) => g.name === alloc.taskGroup);
  const taskStates: Record<string, TaskState> = { ...(alloc.taskStates ?? {}) };
  for (const t of group?.tasks ?? []) {
    const cur = taskStates[t.name];
    const event = taskEvent(TaskEventType.SetupFailure, now, { details: { setup_error: reason, fails_task: 'true' } });
    taskStates[t.name] = {
      state: 'dead',
      failed: true,
      restarts: cur?.restarts ?? 0,
      ...(cur?.startedAt !== undefined ? { startedAt: cur.startedAt } : {}),
      finishedAt: cur?.finishedAt ?? now,
      events: [...(cur?.events ?? []), event],
    };
  }
  return { ...alloc, clientStatus: 'failed', clientDescription: refusedDescription(reason), taskStates };
}
