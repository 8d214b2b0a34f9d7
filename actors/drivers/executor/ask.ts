/**
 * One request to a task's executor, with the retry that covers an executor between answering and
 * exiting, and a fallback for one that is gone.
 * @module
 */
import type { TaskHandle } from '../driver.ts';
import { ExecutorUnreachableError, delay, executorRequest, isSameProcess, readExitRecord } from './client.ts';
import { stateOf } from './handle-state.ts';
import type { ExecutorResponse } from './protocol.ts';

/** How many times an unreachable but living executor is asked again before `fallback` decides. */
const MAX_ATTEMPTS = 50;

/** Asks the executor; on an unreachable executor, `fallback` decides. */
export async function askExecutor<T>(
  handle: TaskHandle,
  req: Parameters<typeof executorRequest>[1],
  onAnswer: (res: ExecutorResponse) => T,
  fallback: () => Promise<T>,
  signal?: AbortSignal,
  timeoutMs?: number,
): Promise<T> {
  const st = stateOf(handle);
  for (let attempt = 0; ; attempt++) {
    try {
      return onAnswer(await executorRequest(st.socketPath, req, { signal, timeoutMs }));
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (!(err instanceof ExecutorUnreachableError)) throw err;
    }
    // The executor may be between answering and exiting, or just gone.
    if (readExitRecord(st.stateDir) || !isSameProcess(st.executorPid, st.executorStartTime) || attempt >= MAX_ATTEMPTS) {
      return fallback();
    }
    await delay(Math.min(5 * (attempt + 1), 50), signal);
  }
}
