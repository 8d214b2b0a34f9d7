/**
 * The task machine's effect actors: start (build the task dir, then the driver), wait, kill.
 * Each is a promise actor whose signal aborts when the task machine leaves the invoking state.
 * @module
 */
import { mkdir, rm, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fromPromise } from 'xstate';
import { sleep } from '../../model/clock.ts';
import { BerthError, DriverConfigError, DriverStartError } from '../../model/errors.ts';
import type { TaskEvent } from '../../model/types.ts';
import { taskEvent } from '../../machines/policy/task-events.ts';
import type { ExitOutput, RecoverOutput, StartOutput } from '../../machines/task.machine.ts';
import type { ExitResult, TaskConfig, TaskHandle } from '../drivers/driver.ts';
import { buildTaskEnv } from '../drivers/env.ts';
import { cgroupEventMessage } from '../cgroups/describe.ts';
import type { Runtime } from './runtime.ts';

/** Nomad's kill retry back-off: min(4^i x 5 s, 2 m), at most 5 attempts. */
export const killBackoffMs = (attempt: number) => Math.min(4 ** attempt * 5000, 120_000);

const msg = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Directory for a task's driver state: `<dataDir>/client/tasks/<allocId>/<task>`. */
export const taskStateDir = (rt: Runtime, allocId: string, task: string) => join(rt.dataDir, 'client', 'tasks', allocId, task);

/** Builds the three task actors for a runtime. */
export function taskActors(rt: Runtime) {
  const lookup = (allocId: string, taskName: string) => {
    const r = rt.registry.get(allocId);
    if (!r) throw new BerthError(`no runner for allocation ${allocId}`);
    const task = r.group.tasks.find((t) => t.name === taskName);
    if (!task) throw new BerthError(`task ${taskName} not found in allocation ${allocId}`);
    const driver = rt.drivers[task.driver];
    if (!driver) throw new BerthError(`unknown driver ${JSON.stringify(task.driver)}`);
    return { r, task, driver };
  };

  const startTask = fromPromise<StartOutput, { allocId: string; taskName: string; attempt: number }>(async ({ input, signal }) => {
    const setupEvents: TaskEvent[] = [];
    try {
      const { r, task, driver } = lookup(input.allocId, input.taskName);
      const notes = r.setupNotes.get(task.name);
      if (notes) {
        r.setupNotes.delete(task.name);
        setupEvents.push(...notes);
      }
      const taskDir = r.allocDir.taskDir(task.name) ?? r.allocDir.newTaskDir(task.name);
      const chroot = driver.capabilities.fsIsolation === 'chroot';
      await taskDir.build(chroot ? { chroot: { ...rt.chrootEnv } } : undefined);
      const stats = taskDir.lastChrootStats;
      if (chroot && stats) {
        setupEvents.push(taskEvent('Task Setup', rt.clock.now(), {
          message: `Built chroot: ${stats.files} files, ${stats.dirs} dirs, ${(stats.bytes / 1048576).toFixed(1)} MB in ${Math.round(stats.ms)} ms`,
        }));
        rt.bus.publish('chroot.built', { allocId: input.allocId, task: task.name, files: stats.files, dirs: stats.dirs, links: stats.links, copies: stats.copies, bytes: stats.bytes, ms: stats.ms });
      }
      if (signal.aborted) throw signal.reason;
      const stateDir = taskStateDir(rt, input.allocId, task.name);
      await mkdir(stateDir, { recursive: true });
      const alloc = r.serverAlloc();
      const config: TaskConfig = {
        id: `${input.allocId}/${task.name}/${input.attempt}`,
        allocId: input.allocId,
        taskName: task.name,
        task,
        env: buildTaskEnv({ alloc, task, taskDir, allocDir: r.allocDir, fsIsolation: chroot ? 'chroot' : 'none', nodeId: rt.nodeId, ...(chroot ? {} : { hostEnv: process.env }) }),
        taskDir: { dir: taskDir.dir, localDir: taskDir.localDir, secretsDir: taskDir.secretsDir, privateDir: taskDir.privateDir, tmpDir: taskDir.tmpDir },
        allocDir: { dir: r.allocDir.dir, sharedDir: r.allocDir.sharedDir, logsDir: join(r.allocDir.sharedDir, 'logs') },
        ...(task.user ? { user: task.user } : {}),
        logs: task.logs ?? { maxFiles: 10, maxFileSizeMB: 10 },
        stateDir,
      };
      const handle = await driver.start(config, signal);
      if (signal.aborted) {
        // The start was cancelled (kill or destroy) after the driver started it: do not leak it.
        await driver.destroy(handle, true).catch(() => {});
        throw signal.reason;
      }
      rt.store.putHandle(input.allocId, task.name, handle);
      const isolation = handle.state.isolation;
      if (typeof isolation === 'string' && isolation !== 'none') {
        const full = isolation === 'chroot+pid+mount';
        setupEvents.push(taskEvent('Driver', rt.clock.now(), {
          message: full ? `isolated: chroot, own PID and mount namespaces` : `isolated: chroot only (PID and mount namespaces unavailable on this kernel)`,
          details: { driver_message: isolation },
        }));
      }
      const resources = cgroupEventMessage(handle.state);
      if (resources) setupEvents.push(taskEvent('Driver', rt.clock.now(), { message: resources, details: { driver_message: resources } }));
      return { ok: true, handle, time: rt.clock.now(), setupEvents };
    } catch (e) {
      if (signal.aborted) throw e;
      return {
        ok: false,
        time: rt.clock.now(),
        error: msg(e),
        recoverable: e instanceof DriverStartError ? e.recoverable : false,
        validation: e instanceof DriverConfigError,
        setupEvents,
      };
    }
  });

  const finish = async (allocId: string, taskName: string, handle: TaskHandle) => {
    const driver = rt.drivers[handle.driver];
    // A failed destroy (e.g. a cgroup with processes that would not die) must not go unseen.
    await driver?.destroy(handle, true).catch((e) => rt.bus.publish('client.error', { allocId, actorId: `task-${allocId}-${taskName}`, error: `destroy: ${msg(e)}` }));
    rt.store.deleteHandle(allocId, taskName);
    await rm(taskStateDir(rt, allocId, taskName), { recursive: true, force: true }).catch(() => {});
    // The alloc's own level goes with its last task (rmdir: only when empty).
    await rmdir(dirname(taskStateDir(rt, allocId, taskName))).catch(() => {});
  };

  const waitTask = fromPromise<ExitOutput, { allocId: string; taskName: string; handle: TaskHandle }>(async ({ input, signal }) => {
    const driver = rt.drivers[input.handle.driver];
    let result: ExitResult;
    try {
      result = await driver!.wait(input.handle, signal);
    } catch (e) {
      if (signal.aborted) throw e; // leaving `running` (kill, shutdown): the task stays as it is
      result = { exitCode: -1, signal: 0, err: `failed to wait for task: ${msg(e)}` };
    }
    await finish(input.allocId, input.taskName, input.handle);
    return { result, time: rt.clock.now() };
  });

  const killTask = fromPromise<ExitOutput, { allocId: string; taskName: string; handle: TaskHandle; timeoutMs: number; signal: string }>(async ({ input, signal }) => {
    const driver = rt.drivers[input.handle.driver]!;
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await driver.stop(input.handle, input.timeoutMs, input.signal);
        break;
      } catch (e) {
        if (/task not found/i.test(msg(e)) || attempt === 4) break;
        await sleep(killBackoffMs(attempt), signal, rt.clock);
      }
    }
    let result: ExitResult;
    try {
      result = await driver.wait(input.handle, signal);
    } catch (e) {
      if (signal.aborted) throw e;
      result = { exitCode: -1, signal: 0, err: msg(e) };
    }
    await finish(input.allocId, input.taskName, input.handle);
    return { result, time: rt.clock.now() };
  });

  const recoverTask = fromPromise<RecoverOutput, { allocId: string; taskName: string; handle: TaskHandle }>(async ({ input }) => {
    const driver = rt.drivers[input.handle.driver];
    try {
      if (!driver) throw new BerthError(`unknown driver ${JSON.stringify(input.handle.driver)}`);
      await driver.recover(input.handle);
      return { ok: true, time: rt.clock.now() };
    } catch (e) {
      // As Nomad: clean up what is left of an unrecoverable task (its cgroup finds every process).
      await driver?.destroy(input.handle, true).catch(() => {});
      rt.store.deleteHandle(input.allocId, input.taskName);
      return { ok: false, time: rt.clock.now(), error: `failed to restore task: ${msg(e)}` };
    }
  });

  return { startTask, waitTask, killTask, recoverTask };
}
