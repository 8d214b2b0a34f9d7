/**
 * What raw_exec and exec share: a driver whose tasks run under a detached per-task executor
 * (./executor.mjs), so they outlive the host process. The two drivers differ only in
 * {@link ProcessDriverKind.prepare}: how the executor spec's isolation is filled in.
 *
 * ```
 *  start ─► launchExecutor ─► ready line ─► TaskHandle (pid, socket, start times)
 *  wait / stop / signal ─► one JSON request on the executor's socket
 *     └─ executor gone? ─► exit.json ─► else pid + start time: orphan (kill its group) or gone
 * ```
 * @module
 */
import fs from 'node:fs';
import path from 'node:path';
import { BerthError, DriverConfigError, DriverStartError, TaskNotRunningError, TaskNotStartedError } from '../../../model/errors.ts';
import type { Task } from '../../../model/types.ts';
import { driverConfigIssues } from '../../../model/schema/driver-config.ts';
import type { TaskResourceUsage } from '../../../model/usage.ts';
import type { CgroupManager } from '../../cgroups/manager.ts';
import { cgroupDirs, cgroupPids, killCgroup, removeCgroup } from '../../cgroups/procs.mjs';
import { formatCpuList } from '../../../machines/policy/cgroup-limits.ts';
import { CgroupStatsReader, unmeasured } from '../../cgroups/stats.ts';
import type { TaskCgroup } from '../../cgroups/types.ts';
import type { Driver, DriverCapabilities, ExecOptions, ExecResult, ExitResult, TaskConfig, TaskHandle } from '../driver.ts';
import { ExecError, runExec, type ExecSpawn } from '../exec-process.ts';
import { interpolateEnv, withHostEnv } from '../env.ts';
import { signalName } from '../signals.ts';
import {
  EXECUTOR_PATH,
  ExecutorUnreachableError,
  delay,
  executorPidsFor,
  executorRequest,
  groupAlive,
  isSameProcess,
  launchExecutor,
  readExecutorState,
  readExitRecord,
  readJson,
  socketPathFor,
  stateFiles,
  writeJsonAtomic,
} from './client.ts';
import type { ExecutorResponse, ExecutorSpec, ExecutorState, ExitRecord, ReadyOk } from './protocol.ts';

/** Options every executor-based driver takes. */
export interface ProcessDriverOptions {
  /** Node binary that runs the executor. Default `process.execPath`. */
  nodePath?: string;
  /** The executor program. Default the bundled `executor/executor.mjs`. */
  executorPath?: string;
  /** How long `start` waits for the executor's ready line. Default 10000 ms. */
  startTimeoutMs?: number;
  /**
   * Where each task's cgroup is made (the client passes its detected one), or why there is none
   * (said in the task's `Driver` event). Absent: no cgroups.
   */
  cgroups?: CgroupManager | { unavailable: string };
}

/** `TaskHandle.state` of raw_exec and exec tasks (plain JSON). */
export interface ProcessHandleState {
  executorPid: number;
  executorStartTime: number;
  /** Process group leader spawned by the executor (also `TaskHandle.pid`). */
  pid: number;
  pgid: number;
  startTime: number;
  isolation: ReadyOk['isolation'];
  /** The resolved command (inside the chroot for exec). */
  command: string;
  socketPath: string;
  stateDir: string;
  /** The task's cgroup, when it has one. */
  cgroup?: TaskCgroup;
  /** Why the task has no cgroup, when cgroups are unavailable. */
  cgroupNote?: string;
  [key: string]: unknown;
}

/** `destroy(handle, false)` on a task that is still running. */
export class TaskStillRunningError extends BerthError {
  constructor(taskName: string) {
    super(`cannot destroy task "${taskName}": it is still running (stop it first, or destroy with force)`);
  }
}

/** `recover` found neither the executor nor a record of the task's exit. */
export class TaskRecoveryError extends BerthError {}

/** The executor vanished without recording the task's exit. */
export class ExecutorLostError extends BerthError {}

/** The part that differs between raw_exec and exec. */
export interface ProcessDriverKind {
  name: string;
  capabilities: DriverCapabilities;
  /** Extra task.config keys this driver accepts besides command and args. */
  extraKeys?: readonly string[];
  /** Whether the task's resources become cgroup limits (raw_exec: when its driver config allows). */
  applyLimits: boolean;
  /** Fills the isolation part of the spec (may throw DriverStartError). */
  prepare(config: TaskConfig): Promise<Pick<ExecutorSpec, 'mode' | 'chroot'>>;
  /**
   * How to run `argv` inside the running task (`Driver.exec`); default: as raw_exec runs it,
   * in the task dir with the task's environment.
   */
  execTarget?(handle: TaskHandle, argv: string[]): Promise<Omit<ExecSpawn, 'cgroupDirs'>>;
}

const DEFAULT_KILL_TIMEOUT_MS = 5000;

/**
 * Validates (with the same schema `parseAllocation` uses) and returns `{ command, args }` of a
 * raw_exec / exec task config.
 */
export function parseCommandConfig(driver: string, task: Task, extraKeys: readonly string[] = []): { command: string; args: string[] } {
  const cfg = task.config ?? {};
  const own = Object.fromEntries(Object.entries(cfg).filter(([k]) => !extraKeys.includes(k)));
  const issues = driverConfigIssues('raw_exec', own).map((line) => line.replace(/^(\w+): unknown field/, `$1: unsupported ${driver} config option`));
  if (issues.length) throw new DriverConfigError(`task "${task.name}": ${issues.join('; ')}`);
  return { command: cfg.command as string, args: ((cfg.args ?? []) as unknown[]).map(String) };
}

const stateOf = (handle: TaskHandle) => handle.state as ProcessHandleState;

function toExit(rec: ExitRecord): ExitResult {
  const out: ExitResult = { exitCode: rec.exitCode, signal: rec.signal };
  if (rec.err) out.err = rec.err;
  if (rec.oomKilled) out.oomKilled = true;
  return out;
}

/** Where a start records its task's cgroup the moment it exists (`<stateDir>/cgroup.json`). */
const cgroupFile = (stateDir: string) => path.join(stateDir, 'cgroup.json');

/** The full handle of a start saved as intent, from the state file its executor wrote. */
function handleFromState(saved: TaskHandle, rec: ExecutorState): TaskHandle {
  // The task's cgroup is in the spec the start wrote for its executor.
  const cgroup = readJson<ExecutorSpec>(stateFiles(saved.config.stateDir).spec)?.cgroup ?? readJson<TaskCgroup>(cgroupFile(saved.config.stateDir));
  const state: ProcessHandleState = {
    executorPid: rec.executorPid,
    executorStartTime: rec.executorStartTime,
    pid: rec.pid,
    pgid: rec.pgid,
    startTime: rec.startTime,
    isolation: rec.isolation,
    command: rec.command,
    socketPath: rec.socketPath,
    stateDir: saved.config.stateDir,
    ...(cgroup ? { cgroup } : {}),
  };
  const { starting: _s, ...rest } = saved;
  return { ...rest, startedAt: rec.startedAt, pid: rec.pid, state };
}

/** Polls (there is no event for "a process that is not my child is gone") until `alive()` is false. */
async function waitGone(alive: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let step = 2;
  while (alive()) {
    if (Date.now() >= deadline) return false;
    await delay(step);
    step = Math.min(step * 2, 50);
  }
  return true;
}

/** Builds a driver around the executor. Used by createRawExecDriver and createExecDriver. */
export function createProcessDriver(kind: ProcessDriverKind, opts: ProcessDriverOptions = {}): Driver {
  const nodePath = opts.nodePath ?? process.execPath;
  const executorPath = opts.executorPath ?? EXECUTOR_PATH;
  const startTimeoutMs = opts.startTimeoutMs ?? 10_000;
  const cgroups = opts.cgroups && 'create' in opts.cgroups ? opts.cgroups : undefined;
  const cgroupNote = opts.cgroups && 'unavailable' in opts.cgroups ? opts.cgroups.unavailable : undefined;
  const statsReader = new CgroupStatsReader();
  const dropCgroup = (cg: TaskCgroup) => (cgroups ? cgroups.remove(cg) : removeCgroup(cg));

  /** Asks the executor; on an unreachable executor, `fallback` decides. */
  async function ask<T>(
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
      if (readExitRecord(st.stateDir) || !isSameProcess(st.executorPid, st.executorStartTime) || attempt >= 50) {
        return fallback();
      }
      await delay(Math.min(5 * (attempt + 1), 50), signal);
    }
  }

  /** Stops a task whose executor is gone, by its process group (after checking pid reuse). */
  async function stopOrphan(st: ProcessHandleState, timeoutMs: number, killSignal: string): Promise<void> {
    const cg = st.cgroup;
    if (cg) {
      // The cgroup holds every process of the task, even ones that left its process group.
      if (isSameProcess(st.pid, st.startTime)) {
        try {
          process.kill(-st.pgid, signalName(killSignal));
        } catch {}
        await waitGone(() => cgroupPids(cg).length > 0, timeoutMs);
      }
      await killCgroup(cg);
      return;
    }
    if (!isSameProcess(st.pid, st.startTime)) {
      // The leader is gone; anything left in its group (with no reuse possible while it exists) dies too.
      if (groupAlive(st.pgid) && !isSameProcess(st.pgid, undefined)) process.kill(-st.pgid, 'SIGKILL');
      return;
    }
    try {
      process.kill(-st.pgid, signalName(killSignal));
    } catch {}
    if (!(await waitGone(() => groupAlive(st.pgid), timeoutMs))) {
      try {
        process.kill(-st.pgid, 'SIGKILL');
      } catch {}
      await waitGone(() => groupAlive(st.pgid), 5000);
    }
  }

  /**
   * Completes a handle saved before its start (the host died during the start). The executor
   * listens, then spawns the task, then writes state.json: while an executor of this state dir
   * is alive and state.json is missing, the start is still under way, so wait for it (bounded by
   * the start timeout, then kill it). No executor and no state.json: nothing was started.
   */
  async function completeStarting(saved: TaskHandle): Promise<TaskHandle> {
    const stateDir = saved.config.stateDir;
    const specPath = stateFiles(stateDir).spec;
    const deadline = Date.now() + startTimeoutMs;
    for (let step = 2; ; step = Math.min(step * 2, 50)) {
      const rec = readExecutorState(stateDir);
      if (rec) return handleFromState(saved, rec);
      const executors = executorPidsFor(specPath);
      if (!executors.length) {
        await dropStartedCgroup(stateDir);
        throw new TaskNotStartedError(`task "${saved.config.taskName}" was never started (no executor, no state in ${stateDir})`);
      }
      if (Date.now() >= deadline) {
        for (const pid of executors) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {}
        }
        await dropStartedCgroup(stateDir);
        throw new TaskNotStartedError(`task "${saved.config.taskName}": its executor never reported a start; killed it`);
      }
      await delay(step);
    }
  }

  /**
   * A handle saved before its start, as far as the start got: the completed handle when the
   * executor recorded a task, else undefined after killing any executor of that start.
   */
  async function settleStarting(h: TaskHandle): Promise<TaskHandle | undefined> {
    if (!h.starting) return h;
    const rec = readExecutorState(h.config.stateDir);
    if (rec) return handleFromState(h, rec);
    for (const pid of executorPidsFor(stateFiles(h.config.stateDir).spec)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    await dropStartedCgroup(h.config.stateDir);
    return undefined;
  }

  /** Removes the cgroup a start that never got an executor made (see `cgroupFile`). */
  async function dropStartedCgroup(stateDir: string): Promise<void> {
    const cg = readJson<TaskCgroup>(cgroupFile(stateDir));
    if (cg) await dropCgroup(cg).catch(() => false);
    fs.rmSync(cgroupFile(stateDir), { force: true });
  }

  const driver: Driver = {
    name: kind.name,
    capabilities: kind.capabilities,

    validateConfig(task: Task): void {
      parseCommandConfig(kind.name, task, kind.extraKeys);
      if (task.killSignal !== undefined) signalName(task.killSignal);
    },

    async start(config: TaskConfig, signal: AbortSignal): Promise<TaskHandle> {
      if (signal.aborted) throw signal.reason;
      const parsed = parseCommandConfig(kind.name, config.task, kind.extraKeys);
      const isolation = await kind.prepare(config);
      if (signal.aborted) throw signal.reason;
      const files = stateFiles(config.stateDir);
      try {
        fs.mkdirSync(config.stateDir, { recursive: true, mode: 0o700 });
        fs.mkdirSync(config.allocDir.logsDir, { recursive: true });
        fs.rmSync(files.exit, { force: true }); // a previous run's
        fs.rmSync(files.state, { force: true });
      } catch (err) {
        throw new DriverStartError(`failed to prepare task state dir ${config.stateDir}: ${(err as Error).message}`, true);
      }
      const env = { ...withHostEnv(config) };
      let cgroup: TaskCgroup | undefined;
      if (cgroups) {
        try {
          cgroup = await cgroups.create({
            allocId: config.allocId,
            taskName: config.taskName,
            resources: config.task.resources,
            applyLimits: kind.applyLimits,
          });
          // On record before anything can run in it: a host that dies before the executor starts
          // leaves a cgroup a later restore must still find and remove.
          writeJsonAtomic(cgroupFile(config.stateDir), cgroup);
        } catch (err) {
          throw new DriverStartError((err as Error).message, true);
        }
        // Nomad's NOMAD_CPU_CORES: the cores the task is pinned to, in cpuset list notation.
        if (cgroup.cpuset?.length) env.NOMAD_CPU_CORES = formatCpuList(cgroup.cpuset);
      }
      const spec: ExecutorSpec = {
        version: 1,
        id: config.id,
        taskName: config.taskName,
        command: interpolateEnv(parsed.command, env),
        args: parsed.args.map((a) => interpolateEnv(a, env)),
        env,
        taskDir: config.taskDir.dir,
        lookupPath: process.env.PATH ?? '',
        ...isolation,
        logs: {
          dir: config.allocDir.logsDir,
          maxFiles: config.logs.maxFiles,
          maxFileSizeBytes: Math.max(1, Math.floor(config.logs.maxFileSizeMB * 1024 * 1024)),
        },
        stateDir: config.stateDir,
        socketPath: socketPathFor(config.stateDir),
        killSignal: config.task.killSignal ?? 'SIGINT',
        killTimeoutMs: config.task.killTimeoutMs ?? DEFAULT_KILL_TIMEOUT_MS,
        ...(cgroup ? { cgroup } : {}),
      };
      // Once the executor is launched, the start runs to its end even when `signal` aborts: the
      // task may already exist, and returning its handle is the only way berth can kill it. The
      // launch is bounded by `startTimeoutMs`.
      let ready;
      try {
        ready = await launchExecutor({ spec, nodePath, executorPath, timeoutMs: startTimeoutMs });
      } catch (err) {
        if (cgroup) await dropStartedCgroup(config.stateDir);
        if (signal.aborted) throw signal.reason;
        throw new DriverStartError(`failed to launch command with executor: ${(err as Error).message}`, true);
      }
      if (!ready.ok) {
        if (cgroup) await dropStartedCgroup(config.stateDir);
        throw new DriverStartError(`failed to launch command with executor: ${ready.error}`, ready.recoverable);
      }
      const state: ProcessHandleState = {
        executorPid: ready.executorPid,
        executorStartTime: ready.executorStartTime,
        pid: ready.pid,
        pgid: ready.pgid,
        startTime: ready.startTime,
        isolation: ready.isolation,
        command: ready.command,
        socketPath: ready.socketPath,
        stateDir: config.stateDir,
        ...(cgroup ? { cgroup } : {}),
        ...(cgroupNote ? { cgroupNote } : {}),
      };
      return { driver: kind.name, id: config.id, config, startedAt: Date.now(), pid: ready.pid, state };
    },

    async wait(handle: TaskHandle, signal: AbortSignal): Promise<ExitResult> {
      if (signal.aborted) throw signal.reason;
      const st = stateOf(handle);
      return ask(
        handle,
        { op: 'wait' },
        (res) => {
          if (!res.ok || !res.result) throw new BerthError(`executor refused wait: ${res.ok ? 'no result' : res.error}`);
          return toExit(res.result);
        },
        async () => {
          const rec = readExitRecord(st.stateDir);
          if (rec) return toExit(rec);
          if (isSameProcess(st.pid, st.startTime)) {
            throw new ExecutorLostError(
              `the executor of task "${handle.config.taskName}" (pid ${st.executorPid}) is gone; the task (pid ${st.pid}) still runs but can no longer be waited on: stop it`,
            );
          }
          throw new ExecutorLostError(`the executor of task "${handle.config.taskName}" (pid ${st.executorPid}) is gone without recording the task's exit`);
        },
        signal,
      );
    },

    async stop(saved: TaskHandle, timeoutMs: number, killSignal: string): Promise<void> {
      const handle = await settleStarting(saved);
      if (!handle) return;
      const st = stateOf(handle);
      const sig = signalName(killSignal || 'SIGINT');
      await ask(
        handle,
        { op: 'stop', signal: sig, timeoutMs },
        (res) => {
          if (!res.ok) throw new BerthError(`executor refused stop: ${res.error}`);
        },
        () => stopOrphan(st, timeoutMs, sig),
      );
    },

    async signal(handle: TaskHandle, sig: string): Promise<void> {
      const st = stateOf(handle);
      const name = signalName(sig);
      await ask(
        handle,
        { op: 'signal', signal: name },
        (res) => {
          if (res.ok) return;
          if (res.code === 'ENOTRUNNING') throw new TaskNotRunningError();
          throw new BerthError(`executor refused signal: ${res.error}`);
        },
        async () => {
          if (readExitRecord(st.stateDir) || !isSameProcess(st.pid, st.startTime)) throw new TaskNotRunningError();
          process.kill(st.pid, name);
        },
      );
    },

    async destroy(saved: TaskHandle, force: boolean): Promise<void> {
      const handle = await settleStarting(saved);
      if (!handle) return;
      const st = stateOf(handle);
      const running = !readExitRecord(st.stateDir) && (isSameProcess(st.executorPid, st.executorStartTime) || isSameProcess(st.pid, st.startTime));
      if (running) {
        if (!force) throw new TaskStillRunningError(handle.config.taskName);
        await driver.stop(handle, 0, 'SIGKILL');
      }
      // The executor exits right after answering; make sure it is gone before cleaning up.
      if (!(await waitGone(() => isSameProcess(st.executorPid, st.executorStartTime), 2000))) {
        try {
          process.kill(st.executorPid, 'SIGKILL');
        } catch {}
      }
      const files = stateFiles(st.stateDir);
      for (const f of [st.socketPath, files.spec, files.state, files.exit, files.log, cgroupFile(st.stateDir)]) {
        fs.rmSync(f, { force: true });
      }
      statsReader.forget(handle.id);
      if (st.cgroup && !(await dropCgroup(st.cgroup))) {
        throw new BerthError(`the cgroup of task "${handle.config.taskName}" could not be removed: processes are left in ${Object.values(st.cgroup.paths)[0]}`);
      }
    },

    /**
     * Runs `command` inside the running task: in its cgroup, and for exec in its chroot,
     * namespaces and user (see {@link runExec}). TaskNotRunningError once the task exited;
     * ExecError for `tty` (no terminal is allocated).
     */
    async exec(handle: TaskHandle, command: string[], opts: ExecOptions = {}): Promise<ExecResult> {
      const st = stateOf(handle);
      if (readExitRecord(st.stateDir) || !isSameProcess(st.pid, st.startTime)) throw new TaskNotRunningError();
      if (!command.length || !command[0]) throw new ExecError('exec: no command given');
      // No pseudo-terminal is allocated: refused rather than run as if there were one.
      if (opts.tty) throw new ExecError('exec: a tty is not supported by berth; run without one (nomad alloc exec -t=false)');
      const target = kind.execTarget
        ? await kind.execTarget(handle, command)
        : { file: command[0], args: command.slice(1), cwd: handle.config.taskDir.dir, env: withHostEnv(handle.config) };
      return runExec({ ...target, ...(st.cgroup ? { cgroupDirs: cgroupDirs(st.cgroup) } : {}) }, opts);
    },

    async stats(handle: TaskHandle): Promise<TaskResourceUsage> {
      const st = stateOf(handle);
      if (st.cgroup) return statsReader.read(handle.id, st.cgroup);
      // Without a cgroup: the process group, as long as its leader is the task we started.
      if (isSameProcess(st.pid, st.startTime)) return statsReader.readProcessGroup(handle.id, st.pgid, handle.startedAt);
      return unmeasured(Date.now());
    },

    async recover(saved: TaskHandle): Promise<TaskHandle> {
      if (saved.driver !== kind.name) {
        throw new TaskRecoveryError(`cannot recover a "${saved.driver}" task with the ${kind.name} driver`);
      }
      const handle = saved.starting ? await completeStarting(saved) : saved;
      const st = stateOf(handle);
      if (!st || typeof st.socketPath !== 'string' || typeof st.stateDir !== 'string') {
        throw new TaskRecoveryError(`cannot recover task "${handle.config?.taskName}": its handle has no executor state`);
      }
      const task = handle.config.taskName;
      await ask(
        handle,
        { op: 'status' },
        () => undefined,
        async () => {
          if (readExitRecord(st.stateDir)) return; // exited while we were away: wait() returns it
          if (isSameProcess(st.pid, st.startTime)) {
            throw new TaskRecoveryError(
              `cannot recover task "${task}": its executor (pid ${st.executorPid}) is gone and the task (pid ${st.pid}) runs on without log capture; stop it with driver.stop()`,
            );
          }
          if (isSameProcess(st.pid, undefined)) {
            throw new TaskRecoveryError(
              `cannot recover task "${task}": its executor (pid ${st.executorPid}) is gone and pid ${st.pid} now belongs to another process (pid reused); the task is gone`,
            );
          }
          throw new TaskRecoveryError(
            `cannot recover task "${task}": its executor (pid ${st.executorPid}) and the task (pid ${st.pid}) are gone, and no exit status was recorded in ${path.join(st.stateDir, 'exit.json')}`,
          );
        },
        undefined,
        5000,
      );
      if (st.cgroup) cgroups?.adopt(st.cgroup);
      return handle;
    },
  };
  return driver;
}
