/**
 * The steps of a task's start (the `startTask` actor), each named and small: take the setup
 * notes, build the task dir (and its chroot), make the driver config, start with the intent on
 * record first, then say what the start set up; or turn a failure into the chart's plain data.
 * @module
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { errorText } from '../../model/error-text.ts';
import { DriverConfigError, DriverStartError } from '../../model/errors.ts';
import type { Allocation, Task, TaskEvent } from '../../model/types.ts';
import { taskEvent } from '../../machines/policy/task-events.ts';
import type { StartOutput } from '../../machines/task/index.ts';
import type { TaskDirHandle } from '../allocdir/handle.ts';
import type { ChrootProgress } from '../allocdir/chroot.ts';
import { cgroupEventMessage } from '../cgroups/describe.ts';
import type { Driver, TaskConfig, TaskHandle } from '../drivers/driver.ts';
import { buildTaskEnv, nodeScope } from '../drivers/env.ts';
import type { RunnerInternals, Runtime } from './runtime.ts';

/** Task events noted for the task's first start (e.g. what a migration removed), taken once. */
export function takeSetupNotes(r: RunnerInternals, taskName: string): TaskEvent[] {
  const notes = r.setupNotes.get(taskName);
  if (!notes) return [];
  r.setupNotes.delete(taskName);
  return notes;
}

/** Builds the task dir (with its chroot for a chroot driver); a chroot build is told on `events` and the bus. */
export async function buildTaskDir(rt: Runtime, r: RunnerInternals, task: Task, chroot: boolean, events: TaskEvent[]): Promise<TaskDirHandle> {
  const taskDir = r.allocDir.taskDir(task.name) ?? r.allocDir.newTaskDir(task.name, { secretsMB: task.resources?.secretsMB });
  // A first chroot build takes seconds: say how far it got, on the bus, as it goes.
  const onChrootProgress = (p: ChrootProgress) =>
    rt.bus.publish('chroot.progress', {
      allocId: r.allocId,
      task: task.name,
      files: p.files,
      dirs: p.dirs,
      bytes: p.bytes,
      ms: p.ms,
      ...(p.total !== undefined ? { total: p.total } : {}),
      done: p.files + p.symlinks + p.skipped,
    });
  await taskDir.build(chroot ? { chroot: { ...rt.chrootEnv }, onChrootProgress } : undefined);
  const stats = taskDir.lastChrootStats;
  if (chroot && stats) {
    events.push(
      taskEvent('Task Setup', rt.clock.now(), {
        message: `Built chroot: ${stats.files} files, ${stats.dirs} dirs, ${(stats.bytes / 1048576).toFixed(1)} MB in ${Math.round(stats.ms)} ms`,
      }),
    );
    const { files, dirs, links, copies, bytes, ms } = stats;
    rt.bus.publish('chroot.built', { allocId: r.allocId, task: task.name, files, dirs, links, copies, bytes, ms });
  }
  return taskDir;
}

/**
 * Nomad's dispatch hook: a dispatched job's payload (`job.payload`, base64) written to
 * `local/<dispatchPayload.file>` before the task starts, mode 0644. A file that would leave
 * `local/` is a start failure that no restart mends.
 */
export async function writeDispatchPayload(alloc: Allocation, task: Task, localDir: string): Promise<void> {
  const file = task.dispatchPayload?.file;
  if (!file || alloc.job.payload === undefined) return;
  const dest = resolve(localDir, file);
  if (!dest.startsWith(localDir + sep)) throw new DriverStartError(`dispatch_payload: file ${JSON.stringify(file)} escapes the task's local/ dir`, false);
  await mkdir(dirname(dest), { recursive: true });
  await writeFile(dest, Buffer.from(alloc.job.payload, 'base64'), { mode: 0o644 });
}

/** What an artifact's source and destination may name of the node (see `nodeScope`). */
export function taskNodeScope(rt: Runtime, alloc: Allocation): Record<string, string> {
  return nodeScope({
    alloc,
    nodeId: rt.nodeId,
    ...(rt.nodeName ? { nodeName: rt.nodeName } : {}),
    ...(rt.datacenter ? { datacenter: rt.datacenter } : {}),
    ...(rt.region ? { region: rt.region } : {}),
    ...(rt.nodeVariables ? { nodeVariables: rt.nodeVariables() } : {}),
  });
}

/**
 * The environment a task runs with on this client (also what its artifacts, services and
 * checks interpolate). `chroot`: directory variables are the in-chroot paths.
 */
export function taskEnvironment(
  rt: Runtime,
  alloc: Allocation,
  task: Task,
  taskDir: { dir: string; localDir: string; secretsDir: string },
  allocDir: { dir: string; sharedDir: string },
  chroot: boolean,
): Record<string, string> {
  return buildTaskEnv({
    alloc,
    task,
    taskDir,
    allocDir,
    fsIsolation: chroot ? 'chroot' : 'none',
    nodeId: rt.nodeId,
    nodeName: rt.nodeName,
    ...(rt.nodeVariables ? { nodeVariables: rt.nodeVariables() } : {}),
    datacenter: rt.datacenter,
    region: rt.region,
    parentCgroup: rt.parentCgroup,
    ...(chroot ? {} : { hostEnv: process.env, includeHostEnv: false }),
  });
}

/** The driver's config for one start: the task, its environment, its dirs and logs. */
export function taskConfig(
  rt: Runtime,
  r: RunnerInternals,
  task: Task,
  taskDir: TaskDirHandle,
  opts: { chroot: boolean; attempt: number; stateDir: string },
): TaskConfig {
  const { chroot } = opts;
  const env = taskEnvironment(rt, r.serverAlloc(), task, taskDir, r.allocDir, chroot);
  return {
    id: `${r.allocId}/${task.name}/${opts.attempt}`,
    allocId: r.allocId,
    taskName: task.name,
    task,
    env,
    ...(chroot ? {} : { inheritHostEnv: true }),
    taskDir: { dir: taskDir.dir, localDir: taskDir.localDir, secretsDir: taskDir.secretsDir, privateDir: taskDir.privateDir, tmpDir: taskDir.tmpDir },
    allocDir: { dir: r.allocDir.dir, sharedDir: r.allocDir.sharedDir, logsDir: join(r.allocDir.sharedDir, 'logs') },
    ...(task.user ? { user: task.user } : {}),
    logs: task.logs ?? { maxFiles: 10, maxFileSizeMB: 10 },
    stateDir: opts.stateDir,
  };
}

/**
 * Starts the driver. Intent before action: the process may exist before start returns, so a
 * host that dies in between must leave a record a restore can finish (reattach or find nothing).
 */
export async function startWithIntent(rt: Runtime, driver: Driver, config: TaskConfig, signal: AbortSignal, events: TaskEvent[] = []): Promise<TaskHandle> {
  const intent: TaskHandle = { driver: config.task.driver, id: config.id, config, startedAt: rt.clock.now(), state: {}, starting: true };
  rt.store.putHandle(config.allocId, config.taskName, intent);
  rt.store.flush();
  let handle: TaskHandle;
  try {
    const emit = (message: string, details: Record<string, string> = {}) =>
      events.push(taskEvent('Driver', rt.clock.now(), { message, details: { driver_message: message, ...details } }));
    handle = await driver.start(config, signal, emit);
  } catch (e) {
    rt.store.deleteHandle(config.allocId, config.taskName); // the driver left nothing behind
    throw e;
  }
  rt.store.putHandle(config.allocId, config.taskName, handle);
  rt.store.flush();
  return handle;
}

/** What the start set up, as "Driver" events: the isolation and the cgroup limits. */
export function startedEvents(rt: Runtime, handle: TaskHandle): TaskEvent[] {
  const events: TaskEvent[] = [];
  const isolation = handle.state.isolation;
  if (typeof isolation === 'string' && isolation !== 'none') {
    const full = isolation === 'chroot+pid+mount';
    events.push(
      taskEvent('Driver', rt.clock.now(), {
        message: full ? `isolated: chroot, own PID and mount namespaces` : `isolated: chroot only (PID and mount namespaces unavailable on this kernel)`,
        details: { driver_message: isolation },
      }),
    );
  }
  const resources = cgroupEventMessage(handle.state);
  if (resources) events.push(taskEvent('Driver', rt.clock.now(), { message: resources, details: { driver_message: resources } }));
  return events;
}

/** A failed (or aborted) start as the chart's plain data. */
export function startFailure(rt: Runtime, e: unknown, signal: AbortSignal, setupEvents: TaskEvent[]): StartOutput {
  if (signal.aborted) return { ok: false, time: rt.clock.now(), error: 'start aborted', recoverable: false, setupEvents };
  return {
    ok: false,
    time: rt.clock.now(),
    error: errorText(e),
    recoverable: e instanceof DriverStartError ? e.recoverable : false,
    validation: e instanceof DriverConfigError,
    setupEvents,
    jitter: rt.random(),
  };
}
