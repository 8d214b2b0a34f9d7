/**
 * One request about a task to the supervisor, with the retries that cover a supervisor that is
 * gone or leaving (start one, ask again, while the task's shim still holds the task or its exit
 * status), and a fallback for a task whose shim is gone too.
 * @module
 */
import fs from 'node:fs';
import type { TaskHandle } from '../driver.ts';
import { ExecutorUnreachableError, delay, executorRequest, isSameProcess, stateFiles } from './client.ts';
import { stateOf } from './handle-state.ts';
import type { ExecutorRequest, ExecutorResponse } from './protocol.ts';

/** How many times an unreachable supervisor is asked again (starting a new one) before `fallback` decides. */
const MAX_ATTEMPTS = 50;

/** How a request is made. */
export interface AskOptions {
  /** Makes sure a supervisor answers (starting one when none does). */
  revive: () => Promise<void>;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Asks the supervisor about `handle`'s task; when no supervisor can hold the task, `fallback` decides. */
export async function askExecutor<T>(
  handle: TaskHandle,
  req: ExecutorRequest,
  onAnswer: (res: ExecutorResponse) => T,
  fallback: () => Promise<T>,
  opts: AskOptions,
): Promise<T> {
  const { signal, timeoutMs } = opts;
  const st = stateOf(handle);
  const files = stateFiles(st.stateDir);
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await executorRequest(st.socketPath, { ...req, stateDir: st.stateDir }, { signal, timeoutMs });
      // The task's shim is gone without a status: nothing is left for a supervisor to hold.
      if (!res.ok && res.code === 'ELOST') return fallback();
      if (res.ok || res.code !== 'ESHUTDOWN') return onAnswer(res);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (!(err instanceof ExecutorUnreachableError)) throw err;
    }
    // No supervisor (or one leaving): a new one adopts the task while its shim holds it or its status.
    const held = fs.existsSync(files.status) || isSameProcess(st.executorPid, st.executorStartTime);
    if (fs.existsSync(files.exit) || !held || attempt >= MAX_ATTEMPTS) return fallback();
    try {
      await opts.revive();
    } catch {
      return fallback(); // no supervisor can be started: what the state dir says
    }
    if (attempt > 0) await delay(Math.min(5 * attempt, 50), signal);
  }
}
