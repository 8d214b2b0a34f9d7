/**
 * What raw_exec and exec share: a driver whose tasks run under berth's detached supervisor
 * (./supervisor.mjs, one per client) and a per-task shim (./shim.mjs), so they outlive the host
 * process and the supervisor alike. The two drivers differ only in
 * {@link ProcessDriverKind.prepare}: how the task spec's isolation is filled in.
 *
 * ```
 *  start ─► startOnSupervisor ─► ready line ─► TaskHandle (pid, shim pid, socket, start times)
 *  wait / stop / signal ─► one JSON request on the supervisor's socket
 *     └─ no supervisor? ─► the shim still holds the task (or its status): start one, ask again
 *          └─ shim gone too ─► exit.json ─► else pid + start time: orphan (kill its group) or gone
 * ```
 *
 * The steps live beside it: a start's in process-start.ts, a handle saved mid-start in
 * starting.ts, one executor request in ask.ts, an orphan's stop in orphan.ts.
 * @module
 */
import fs from 'node:fs';
import path from 'node:path';
import { BerthError, DriverConfigError, TaskNotRunningError } from '../../../model/errors.ts';
import type { Task } from '../../../model/types.ts';
import { driverConfigIssues } from '../../../model/schema/driver-config.ts';
import type { TaskResourceUsage } from '../../../model/usage.ts';
import type { CgroupManager } from '../../cgroups/manager.ts';
import { cgroupDirs, removeCgroup } from '../../cgroups/procs.mjs';
import { CgroupStatsReader, unmeasured } from '../../cgroups/stats.ts';
import type { TaskCgroup } from '../../cgroups/types.ts';
import type { Driver, DriverCapabilities, ExecOptions, ExecResult, ExitResult, TaskConfig, TaskHandle } from '../driver.ts';
import { ExecError, runExec, type ExecSpawn } from '../exec-process.ts';
import { withHostEnv } from '../env.ts';
import { signalName } from '../signals.ts';
import { askExecutor } from './ask.ts';
import {
  SUPERVISOR_PATH,
  defaultSupervisorDir,
  dismissSupervisor,
  ensureSupervisor,
  isSameProcess,
  readExitRecord,
  stateFiles,
  type SupervisorOptions,
} from './client.ts';
import { cgroupFile, stateOf, toExit, type ProcessHandleState } from './handle-state.ts';
import { stopOrphan, waitGone } from './orphan.ts';
import { startProcessTask } from './process-start.ts';
import type { ExecutorSpec } from './protocol.ts';
import { completeStarting, settleStarting } from './starting.ts';

export type { ProcessHandleState } from './handle-state.ts';

/** Options every supervisor-based driver takes. */
export interface ProcessDriverOptions {
  /** Node binary that runs the supervisor. Default `process.execPath`. */
  nodePath?: string;
  /** The supervisor program. Default the bundled `executor/supervisor.mjs`. */
  executorPath?: string;
  /**
   * The supervisor's dir (socket and log). Drivers given the same dir share one supervisor. Default
   * {@link defaultSupervisorDir}; a client passes `<dataDir>/client/supervisor`.
   */
  supervisorDir?: string;
  /** How long `start` waits for the task's ready line. Default 10000 ms. */
  startTimeoutMs?: number;
  /**
   * Where each task's cgroup is made (the client passes its detected one), or why there is none
   * (said in the task's `Driver` event). Absent: no cgroups.
   */
  cgroups?: CgroupManager | { unavailable: string };
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

/** wait() on an executor that is gone: its recorded exit, else why there is none. */
async function exitWithoutExecutor(handle: TaskHandle): Promise<ExitResult> {
  const st = stateOf(handle);
  const rec = readExitRecord(st.stateDir);
  if (rec) return toExit(rec);
  if (isSameProcess(st.pid, st.startTime)) {
    throw new ExecutorLostError(
      `the executor of task "${handle.config.taskName}" (pid ${st.executorPid}) is gone; the task (pid ${st.pid}) still runs but can no longer be waited on: stop it`,
    );
  }
  throw new ExecutorLostError(`the executor of task "${handle.config.taskName}" (pid ${st.executorPid}) is gone without recording the task's exit`);
}

/** signal() on an executor that is gone: straight to the task, if it is still the one started. */
async function signalWithoutExecutor(st: ProcessHandleState, name: NodeJS.Signals): Promise<void> {
  if (readExitRecord(st.stateDir) || !isSameProcess(st.pid, st.startTime)) throw new TaskNotRunningError();
  process.kill(st.pid, name);
}

/**
 * recover() found no executor: fine when the task's exit was recorded (wait() returns it); else
 * say what is left of the task, so the caller can stop it or let it go.
 */
async function recoverWithoutExecutor(st: ProcessHandleState, task: string): Promise<void> {
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
}

/** Whether the task or its executor still runs (no exit recorded). */
const stillRunning = (st: ProcessHandleState): boolean =>
  !readExitRecord(st.stateDir) && (isSameProcess(st.executorPid, st.executorStartTime) || isSameProcess(st.pid, st.startTime));

/** Removes what a task left in its state dir once its shim is gone. */
async function clearStateDir(st: ProcessHandleState): Promise<void> {
  // The shim exits right after recording the exit; make sure it is gone before cleaning up.
  if (!(await waitGone(() => isSameProcess(st.executorPid, st.executorStartTime), 2000))) {
    try {
      process.kill(st.executorPid, 'SIGKILL');
    } catch {}
  }
  const files = stateFiles(st.stateDir);
  // Off the event loop: at 1,000 allocs these synchronous unlinks were 14 % of the agent's time.
  const all = [files.spec, files.state, files.exit, files.status, files.stdoutFifo, files.stderrFifo, files.log, cgroupFile(st.stateDir)];
  await Promise.all(all.map((f) => fs.promises.rm(f, { force: true })));
}

/** Builds a driver around the executor. Used by createRawExecDriver and createExecDriver. */
export function createProcessDriver(kind: ProcessDriverKind, opts: ProcessDriverOptions = {}): Driver {
  const startTimeoutMs = opts.startTimeoutMs ?? 10_000;
  const supervisor: SupervisorOptions = {
    dir: opts.supervisorDir ?? defaultSupervisorDir(),
    nodePath: opts.nodePath ?? process.execPath,
    supervisorPath: opts.executorPath ?? SUPERVISOR_PATH,
    timeoutMs: startTimeoutMs,
  };
  const revive = () => ensureSupervisor(supervisor).then(() => undefined);
  const cgroups = opts.cgroups && 'create' in opts.cgroups ? opts.cgroups : undefined;
  const cgroupNote = opts.cgroups && 'unavailable' in opts.cgroups ? opts.cgroups.unavailable : undefined;
  const statsReader = new CgroupStatsReader();
  const dropCgroup = (cg: TaskCgroup) => (cgroups ? cgroups.remove(cg) : removeCgroup(cg));

  const driver: Driver = {
    name: kind.name,
    capabilities: kind.capabilities,

    validateConfig(task: Task): void {
      parseCommandConfig(kind.name, task, kind.extraKeys);
      if (task.killSignal !== undefined) signalName(task.killSignal);
    },

    async start(config: TaskConfig, signal: AbortSignal): Promise<TaskHandle> {
      if (signal.aborted) throw signal.reason;
      const command = parseCommandConfig(kind.name, config.task, kind.extraKeys);
      const isolation = await kind.prepare(config);
      if (signal.aborted) throw signal.reason;
      const setup = {
        driverName: kind.name,
        applyLimits: kind.applyLimits,
        supervisor,
        ...(cgroups ? { cgroups } : {}),
        ...(cgroupNote ? { cgroupNote } : {}),
        dropCgroup,
        command,
        isolation,
      };
      return startProcessTask(config, setup, signal);
    },

    async wait(handle: TaskHandle, signal: AbortSignal): Promise<ExitResult> {
      if (signal.aborted) throw signal.reason;
      return askExecutor(
        handle,
        { op: 'wait' },
        (res) => {
          if (!res.ok || !res.result) throw new BerthError(`executor refused wait: ${res.ok ? 'no result' : res.error}`);
          return toExit(res.result);
        },
        () => exitWithoutExecutor(handle),
        { revive, signal },
      );
    },

    async stop(saved: TaskHandle, timeoutMs: number, killSignal: string): Promise<void> {
      const handle = await settleStarting(saved, dropCgroup);
      if (!handle) return;
      const sig = signalName(killSignal || 'SIGINT');
      await askExecutor(
        handle,
        { op: 'stop', signal: sig, timeoutMs },
        (res) => {
          if (!res.ok) throw new BerthError(`executor refused stop: ${res.error}`);
        },
        () => stopOrphan(stateOf(handle), timeoutMs, sig),
        { revive },
      );
    },

    async signal(handle: TaskHandle, sig: string): Promise<void> {
      const name = signalName(sig);
      await askExecutor(
        handle,
        { op: 'signal', signal: name },
        (res) => {
          if (res.ok) return;
          if (res.code === 'ENOTRUNNING') throw new TaskNotRunningError();
          throw new BerthError(`executor refused signal: ${res.error}`);
        },
        () => signalWithoutExecutor(stateOf(handle), name),
        { revive },
      );
    },

    async destroy(saved: TaskHandle, force: boolean): Promise<void> {
      const handle = await settleStarting(saved, dropCgroup);
      if (!handle) return;
      const st = stateOf(handle);
      if (stillRunning(st)) {
        if (!force) throw new TaskStillRunningError(handle.config.taskName);
        await driver.stop(handle, 0, 'SIGKILL');
      }
      await clearStateDir(st);
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

    /** Sends the supervisor away when it holds no task (it would leave when idle anyway), and waits for it to go. */
    async shutdown(): Promise<void> {
      await dismissSupervisor(supervisor);
    },

    async recover(saved: TaskHandle): Promise<TaskHandle> {
      if (saved.driver !== kind.name) {
        throw new TaskRecoveryError(`cannot recover a "${saved.driver}" task with the ${kind.name} driver`);
      }
      const handle = saved.starting ? await completeStarting(saved, startTimeoutMs, dropCgroup) : saved;
      const st = stateOf(handle);
      if (!st || typeof st.socketPath !== 'string' || typeof st.stateDir !== 'string') {
        throw new TaskRecoveryError(`cannot recover task "${handle.config?.taskName}": its handle has no executor state`);
      }
      await askExecutor(
        handle,
        { op: 'status' },
        () => undefined,
        () => recoverWithoutExecutor(st, handle.config.taskName),
        { revive, timeoutMs: 5000 },
      );
      if (st.cgroup) cgroups?.adopt(st.cgroup);
      return handle;
    },
  };
  return driver;
}
