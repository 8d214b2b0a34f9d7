/**
 * The task chart's (`machines/task/`) effect actors: start (build the task dir, then the driver), wait, kill.
 * Each is a promise actor whose signal aborts when the task chart leaves the invoking state.
 * @module
 */
import { dirname, join } from 'node:path';
import { fromPromise } from 'xstate';
import { fromAbortablePromise } from './abortable.ts';
import { sleep, type Clock } from '../../model/clock.ts';
import { BerthError, TaskNotStartedError } from '../../model/errors.ts';
import type { TaskEvent } from '../../model/types.ts';
import type { ExitOutput, RecoverOutput, StartOutput } from '../../machines/task/index.ts';
import type { Driver, ExitResult, TaskHandle } from '../drivers/driver.ts';
import { runnerOf, type Runtime } from './runtime.ts';
import { templateEnv } from './template-hook.ts';
import { buildTaskDir, startedEvents, startFailure, startWithIntent, takeSetupNotes, taskConfig, writeDispatchPayload } from './start-steps.ts';
import { errorText } from '../../model/error-text.ts';

/** Nomad's kill retry back-off: min(4^i x 5 s, 2 m), at most {@link KILL_ATTEMPTS} attempts. */
export const killBackoffMs = (attempt: number) => Math.min(4 ** attempt * 5000, 120_000);

/** Kill attempts before berth gives up on a driver's stop (Nomad's killFailureLimit). */
export const KILL_ATTEMPTS = 5;

/**
 * `driver.stop`, retried on {@link killBackoffMs} until it succeeds, the task is not found, or
 * {@link KILL_ATTEMPTS} failed. Rejects only when `signal` aborts a back-off sleep. One
 * helper for every kill: the chart's kill, and the SIGKILL that makes sure a task whose wait or
 * reattach failed is gone before its exit goes on record.
 */
export async function stopWithRetry(
  driver: Driver,
  handle: TaskHandle,
  timeoutMs: number,
  killSignal: string,
  clock: Clock,
  signal?: AbortSignal,
): Promise<void> {
  for (let attempt = 0; attempt < KILL_ATTEMPTS; attempt++) {
    try {
      await driver.stop(handle, timeoutMs, killSignal);
      return;
    } catch (e) {
      if (/task not found/i.test(msg(e)) || attempt === KILL_ATTEMPTS - 1) return;
      await sleep(killBackoffMs(attempt), signal, clock);
    }
  }
}

const msg = errorText;

/** Directory for a task's driver state: `<dataDir>/client/tasks/<allocId>/<task>`. */
export const taskStateDir = (rt: Runtime, allocId: string, task: string) => join(rt.dataDir, 'client', 'tasks', allocId, task);

/**
 * Waits for the task's exit. When the driver reports that it went away under the task (a plugin
 * shutdown), it is asked to recover the task and the wait goes on, as Nomad's task runner does;
 * a failed recovery ends the wait with that result (no exit reported by the task itself).
 */
export async function waitExit(driver: Driver, handle: TaskHandle, signal: AbortSignal): Promise<ExitResult> {
  for (;;) {
    const result = await driver.wait(handle, signal);
    if (!result.pluginShutdown || signal.aborted) return result;
    try {
      await driver.recover(handle);
    } catch (e) {
      return { exitCode: result.exitCode, signal: result.signal, err: `${result.err ?? 'plugin is shut down'}; failed to recover task: ${msg(e)}` };
    }
  }
}

export { taskEnvironment } from './start-steps.ts';

/** Builds the three task actors for a runtime. */
export function taskActors(rt: Runtime) {
  const lookup = (allocId: string, taskName: string) => {
    const r = runnerOf(rt, allocId);
    // The latest definition: an in-place update changes what the next start runs (Nomad's
    // TaskRunner.Update swaps its task).
    const latest = r.serverAlloc().job.taskGroups.find((g) => g.name === r.serverAlloc().taskGroup);
    const task = latest?.tasks.find((t) => t.name === taskName) ?? r.group.tasks.find((t) => t.name === taskName);
    if (!task) throw new BerthError(`task ${taskName} not found in allocation ${allocId}`);
    const driver = rt.drivers[task.driver];
    if (!driver) throw new BerthError(`unknown driver ${JSON.stringify(task.driver)}`);
    return { r, task, driver };
  };

  /**
   * Builds the task dir and starts the driver, in named steps (start-steps.ts). Never rejects.
   * Aborted (the task was killed while starting), it stops before the driver when it can; once
   * the driver started the task it returns the handle anyway, so the chart kills the process
   * before reporting the task dead.
   */
  const startTask = fromAbortablePromise<StartOutput, { allocId: string; taskName: string; attempt: number }>(async ({ input, signal }) => {
    const setupEvents: TaskEvent[] = [];
    try {
      const { r, task, driver } = lookup(input.allocId, input.taskName);
      setupEvents.push(...takeSetupNotes(r, task.name));
      const chroot = driver.capabilities.fsIsolation === 'chroot';
      const taskDir = await buildTaskDir(rt, r, task, chroot, setupEvents);
      await writeDispatchPayload(r.serverAlloc(), task, taskDir.localDir);
      if (signal.aborted) throw signal.reason;
      const stateDir = taskStateDir(rt, input.allocId, task.name);
      await rt.fs.mkdirp(stateDir);
      const base = taskConfig(rt, r, task, taskDir, { chroot, attempt: input.attempt, stateDir });
      // The templates rendered in prestart; an env template's variables join the task's env.
      const config = task.templates?.length ? { ...base, env: { ...base.env, ...templateEnv(r, task.name) } } : base;
      const handle = await startWithIntent(rt, driver, config, signal, setupEvents);
      setupEvents.push(...startedEvents(rt, handle));
      return { ok: true, handle, time: rt.clock.now(), setupEvents };
    } catch (e) {
      return startFailure(rt, e, signal, setupEvents);
    }
  });

  /**
   * After the task's exit is known. Ordering: the exit goes into the saved handle (durably) before
   * the driver's own record of it is removed, so a host that dies anywhere in between restores
   * the exit, never a task to run again. The handle row stays until the next start replaces it or
   * the alloc is destroyed.
   */
  const finish = async (allocId: string, taskName: string, handle: TaskHandle, result: ExitResult) => {
    rt.store.putHandle(allocId, taskName, { ...handle, exited: result });
    rt.store.flush();
    const driver = rt.drivers[handle.driver];
    // A failed destroy (e.g. a cgroup with processes that would not die) must not go unseen.
    await driver
      ?.destroy(handle, true)
      .catch((e) => rt.bus.publish('client.error', { allocId, actorId: `task-${allocId}-${taskName}`, error: `destroy: ${msg(e)}` }));
    await rt.fs.rmrf(taskStateDir(rt, allocId, taskName)).catch(() => {});
    // The alloc's own level goes with its last task (rmdir: only when empty).
    await rt.fs.rmdir(dirname(taskStateDir(rt, allocId, taskName))).catch(() => {});
  };

  const waitTask = fromPromise<ExitOutput, { allocId: string; taskName: string; handle: TaskHandle }>(async ({ input, signal }) => {
    const driver = rt.drivers[input.handle.driver];
    let result: ExitResult;
    try {
      result = await waitExit(driver!, input.handle, signal);
    } catch (e) {
      if (signal.aborted) throw e; // leaving `running` (kill, shutdown): the task stays as it is
      result = { exitCode: -1, signal: 0, err: `failed to wait for task: ${msg(e)}` };
      // The process may live on (its executor is lost): kill it before its exit goes on record,
      // or a host that dies in between would restore an exit beside a live process. A kill
      // that arrives meanwhile aborts the back-off: the chart's killing takes over.
      if (driver) await stopWithRetry(driver, input.handle, 0, 'SIGKILL', rt.clock, signal);
    }
    await finish(input.allocId, input.taskName, input.handle, result);
    return { result, time: rt.clock.now(), jitter: rt.random() };
  });

  const killTask = fromPromise<ExitOutput, { allocId: string; taskName: string; handle: TaskHandle; timeoutMs: number; signal: string }>(
    async ({ input, signal }) => {
      const driver = rt.drivers[input.handle.driver]!;
      await stopWithRetry(driver, input.handle, input.timeoutMs, input.signal, rt.clock, signal);
      let result: ExitResult;
      try {
        result = await waitExit(driver, input.handle, signal);
      } catch (e) {
        if (signal.aborted) throw e;
        result = { exitCode: -1, signal: 0, err: msg(e) };
        await stopWithRetry(driver, input.handle, 0, 'SIGKILL', rt.clock, signal); // as in waitTask: gone before recorded
      }
      await finish(input.allocId, input.taskName, input.handle, result);
      return { result, time: rt.clock.now(), jitter: rt.random() };
    },
  );

  /**
   * Reattaches a saved handle (completing one saved before its start). When that fails, whatever
   * is left of the task (an orphaned process group whose executor died) is killed before the
   * chart may start the task again: a live process never goes without an owner.
   */
  const recoverTask = fromAbortablePromise<RecoverOutput, { allocId: string; taskName: string; handle: TaskHandle }>(async ({ input }) => {
    const driver = rt.drivers[input.handle.driver];
    try {
      if (!driver) throw new BerthError(`unknown driver ${JSON.stringify(input.handle.driver)}`);
      const handle = (await driver.recover(input.handle)) ?? input.handle;
      if (handle !== input.handle) {
        rt.store.putHandle(input.allocId, input.taskName, handle);
        rt.store.flush();
      }
      return { ok: true, time: rt.clock.now(), handle };
    } catch (e) {
      // As Nomad, clean up what is left of an unrecoverable task (its cgroup finds every
      // process); a start saved as intent too: the process it made may run on (drivers accept
      // such a handle in stop and destroy).
      if (driver && !(e instanceof TaskNotStartedError)) {
        // Not abortable: a kill arriving meanwhile asks for exactly this.
        await stopWithRetry(driver, input.handle, 0, 'SIGKILL', rt.clock);
        await driver.destroy(input.handle, true).catch(() => {});
      }
      rt.store.deleteHandle(input.allocId, input.taskName);
      return {
        ok: false,
        time: rt.clock.now(),
        error: `failed to restore task: ${msg(e)}`,
        ...(e instanceof TaskNotStartedError ? { notStarted: true } : {}),
        jitter: rt.random(),
      };
    }
  });

  /** Sends a signal to a running task; its done or error answers `AllocRunner.signal`. */
  const signalTask = fromPromise<void, { allocId: string; taskName: string; handle: TaskHandle; signal: string }>(async ({ input }) => {
    const driver = rt.drivers[input.handle.driver];
    if (!driver) throw new BerthError(`unknown driver ${JSON.stringify(input.handle.driver)}`);
    await driver.signal(input.handle, input.signal);
  });

  return { startTask, waitTask, killTask, recoverTask, signalTask };
}
