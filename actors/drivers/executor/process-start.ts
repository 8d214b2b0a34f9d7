/**
 * A raw_exec/exec start, step by step: clear the task's state dir, make its cgroup (on record
 * before anything runs in it), write the task's spec, start it through the supervisor, and make
 * the handle from its ready line. A step that fails leaves nothing behind (the cgroup is removed).
 *
 * ```
 *  prepareStateDir ─► createTaskCgroup ─► executorSpec ─► launch ─► startedHandle
 * ```
 * @module
 */
import fs from 'node:fs';
import { DriverStartError } from '../../../model/errors.ts';
import { errorText } from '../../../model/error-text.ts';
import { formatCpuList } from '../../../machines/policy/cgroup-limits.ts';
import type { CgroupManager } from '../../cgroups/manager.ts';
import type { TaskCgroup } from '../../cgroups/types.ts';
import type { TaskConfig, TaskHandle } from '../driver.ts';
import { interpolateEnv, withHostEnv } from '../env.ts';
import { startOnSupervisor, stateFiles, supervisorSocketPath, writeJsonAtomic, type SupervisorOptions } from './client.ts';
import { cgroupFile, type ProcessHandleState } from './handle-state.ts';
import type { ExecutorSpec, ReadyOk } from './protocol.ts';
import { dropStartedCgroup, type CgroupDropper } from './starting.ts';

/** A task's kill timeout when its spec gives none (Nomad's 5 s). */
const DEFAULT_KILL_TIMEOUT_MS = 5000;

/** What a start needs from its driver. */
export interface StartSetup {
  driverName: string;
  /** Whether the task's resources become cgroup limits. */
  applyLimits: boolean;
  /** The supervisor the task starts under. */
  supervisor: SupervisorOptions;
  /** Where the task's cgroup is made; absent: no cgroup. */
  cgroups?: CgroupManager;
  /** Why there is no cgroup, said on the handle. */
  cgroupNote?: string;
  dropCgroup: CgroupDropper;
  /** The command and arguments of the task's config, validated. */
  command: { command: string; args: string[] };
  /** The isolation part of the spec (the driver kind's). */
  isolation: Pick<ExecutorSpec, 'mode' | 'chroot'>;
}

/** Makes the state and log dirs and clears a previous run's exit and state files. Each step takes only the fields it reads. */
export function prepareStateDir(config: Pick<TaskConfig, 'stateDir' | 'allocDir'>): void {
  const files = stateFiles(config.stateDir);
  try {
    fs.mkdirSync(config.stateDir, { recursive: true, mode: 0o700 });
    fs.mkdirSync(config.allocDir.logsDir, { recursive: true });
    // A previous run's.
    for (const f of [files.exit, files.state, files.status]) fs.rmSync(f, { force: true });
  } catch (err) {
    throw new DriverStartError(`failed to prepare task state dir ${config.stateDir}: ${errorText(err)}`, true);
  }
}

/** Makes the task's cgroup and records it in the state dir at once. */
export async function createTaskCgroup(
  cgroups: Pick<CgroupManager, 'create'>,
  config: Pick<TaskConfig, 'allocId' | 'taskName' | 'stateDir'> & { task: Pick<TaskConfig['task'], 'resources'> },
  applyLimits: boolean,
): Promise<TaskCgroup> {
  try {
    // On record before its first directory is made, and again once made: a host that dies
    // anywhere before the executor starts leaves a cgroup a later restore must find and remove.
    const record = (cg: TaskCgroup) => writeJsonAtomic(cgroupFile(config.stateDir), cg);
    const cgroup = await cgroups.create({ allocId: config.allocId, taskName: config.taskName, resources: config.task.resources, applyLimits }, record);
    record(cgroup);
    return cgroup;
  } catch (err) {
    throw new DriverStartError(errorText(err), true);
  }
}

/** The spec the executor runs the task by (command and args interpolated in its environment). */
export function executorSpec(
  config: Pick<TaskConfig, 'id' | 'taskName' | 'taskDir' | 'allocDir' | 'logs' | 'stateDir' | 'task'>,
  setup: Pick<StartSetup, 'command' | 'isolation' | 'supervisor'>,
  env: Record<string, string>,
  cgroup: TaskCgroup | undefined,
): ExecutorSpec {
  return {
    version: 1,
    id: config.id,
    taskName: config.taskName,
    command: interpolateEnv(setup.command.command, env),
    args: setup.command.args.map((a) => interpolateEnv(a, env)),
    env,
    taskDir: config.taskDir.dir,
    lookupPath: process.env.PATH ?? '',
    ...setup.isolation,
    logs: {
      dir: config.allocDir.logsDir,
      maxFiles: config.logs.maxFiles,
      maxFileSizeBytes: Math.max(1, Math.floor(config.logs.maxFileSizeMB * 1024 * 1024)),
    },
    stateDir: config.stateDir,
    socketPath: supervisorSocketPath(setup.supervisor.dir),
    killSignal: config.task.killSignal ?? 'SIGINT',
    killTimeoutMs: config.task.killTimeoutMs ?? DEFAULT_KILL_TIMEOUT_MS,
    ...(cgroup ? { cgroup } : {}),
  };
}

/**
 * Starts the task through the supervisor and waits for its ready line. Once asked, the start
 * runs to its end even when `signal` aborts: the task may already exist, and returning its handle
 * is the only way berth can kill it. The start is bounded by the start timeout.
 */
export async function launch(
  spec: ExecutorSpec,
  setup: Pick<StartSetup, 'supervisor' | 'dropCgroup'>,
  cgroup: TaskCgroup | undefined,
  signal: AbortSignal,
): Promise<ReadyOk> {
  const dropOnFailure = () => (cgroup ? dropStartedCgroup(spec.stateDir, setup.dropCgroup) : Promise.resolve());
  let ready;
  try {
    ready = await startOnSupervisor(spec, setup.supervisor);
  } catch (err) {
    await dropOnFailure();
    if (signal.aborted) throw signal.reason;
    throw new DriverStartError(`failed to launch command with executor: ${errorText(err)}`, true);
  }
  if (!ready.ok) {
    await dropOnFailure();
    throw new DriverStartError(`failed to launch command with executor: ${ready.error}`, ready.recoverable);
  }
  return ready;
}

/** The handle of a started task, from its executor's ready line. */
export function startedHandle(
  config: TaskConfig,
  setup: Pick<StartSetup, 'driverName' | 'cgroupNote'>,
  ready: ReadyOk,
  cgroup: TaskCgroup | undefined,
): TaskHandle {
  const state: ProcessHandleState = {
    executorPid: ready.executorPid,
    executorStartTime: ready.executorStartTime,
    ...(ready.supervisorPid ? { supervisorPid: ready.supervisorPid } : {}),
    pid: ready.pid,
    pgid: ready.pgid,
    startTime: ready.startTime,
    isolation: ready.isolation,
    command: ready.command,
    socketPath: ready.socketPath,
    stateDir: config.stateDir,
    ...(cgroup ? { cgroup } : {}),
    ...(setup.cgroupNote ? { cgroupNote: setup.cgroupNote } : {}),
  };
  return { driver: setup.driverName, id: config.id, config, startedAt: Date.now(), pid: ready.pid, state };
}

/** Starts the task: every step above, in order. */
export async function startProcessTask(config: TaskConfig, setup: StartSetup, signal: AbortSignal): Promise<TaskHandle> {
  prepareStateDir(config);
  const env = { ...withHostEnv(config) };
  const cgroup = setup.cgroups ? await createTaskCgroup(setup.cgroups, config, setup.applyLimits) : undefined;
  // Nomad's NOMAD_CPU_CORES: the cores the task is pinned to, in cpuset list notation.
  if (cgroup?.cpuset?.length) env.NOMAD_CPU_CORES = formatCpuList(cgroup.cpuset);
  const ready = await launch(executorSpec(config, setup, env, cgroup), setup, cgroup, signal);
  return startedHandle(config, setup, ready, cgroup);
}
