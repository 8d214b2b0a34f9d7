/**
 * The executor's on-disk and wire formats (types only: `executor.mjs` imports them through JSDoc).
 *
 * ```
 *  host (driver)                          executor (detached, one per task)           task
 *  write <stateDir>/executor.json ──►  node executor.mjs <spec>
 *                                      listen <socketPath>
 *                                      spawn (own process group) ───────────────────►  runs
 *  fd 3  ◄── one ReadyLine, then fd 3 closed                      stdout/stderr ◄──── pipes
 *                                      state.json (atomic)     <logs>/<task>.stdout.N, .stderr.N
 *  socket: one JSON request per line ──► answers one JSON line per request (with its id)
 *                                      task exits: kill -KILL -pgid, drain + close logs,
 *                                      exit.json (atomic), answer waiters, close, exit
 * ```
 * @module
 */
import type { TaskCgroup } from '../../cgroups/types.ts';

/** What the driver writes to `<stateDir>/executor.json` and passes as the executor's argument. */
export interface ExecutorSpec {
  version: 1;
  /** TaskConfig.id, for logs. */
  id: string;
  taskName: string;
  /** As configured (resolved by the executor: task dir local/, task dir, then PATH). */
  command: string;
  args: string[];
  /** The task's full environment. */
  env: Record<string, string>;
  /** The task dir on the host: the working directory (raw) or the chroot root (chroot). */
  taskDir: string;
  /** PATH used to look the command up when `env.PATH` is absent (raw mode). */
  lookupPath: string;
  mode: 'raw' | 'chroot';
  chroot?: {
    uid: number;
    gid: number;
    /** Run in new PID + mount namespaces (needs `unshare`). */
    namespaces: boolean;
    /** Absolute host paths of the helper programs. */
    unshare?: string;
    chroot: string;
    mount?: string;
    shell?: string;
  };
  logs: { dir: string; maxFiles: number; maxFileSizeBytes: number };
  stateDir: string;
  socketPath: string;
  /** The task's cgroup: the child is spawned inside it, and at exit everything in it is killed. */
  cgroup?: TaskCgroup;
  /** Used when the executor itself receives SIGTERM or SIGINT: stop the task like this. */
  killSignal: string;
  killTimeoutMs: number;
}

/** The executor's single line on fd 3 when the task is running. */
export interface ReadyOk {
  ok: true;
  executorPid: number;
  /** /proc/<pid>/stat field 22 (clock ticks since boot) of the executor. */
  executorStartTime: number;
  /** The process group leader the executor spawned (the task for raw; `unshare`/`chroot` for exec). */
  pid: number;
  pgid: number;
  startTime: number;
  isolation: 'none' | 'chroot' | 'chroot+pid+mount';
  /** The absolute path the command resolved to (inside the chroot for exec). */
  command: string;
  socketPath: string;
}
/** The executor's single line on fd 3 when the task could not be started. */
export interface ReadyError {
  ok: false;
  error: string;
  recoverable: boolean;
}
export type ReadyLine = ReadyOk | ReadyError;

/** `<stateDir>/state.json`, rewritten atomically on start and on each log rotation. */
export interface ExecutorState extends Omit<ReadyOk, 'ok'> {
  startedAt: number;
  logs: { dir: string; stdout: number; stderr: number };
}

/** `<stateDir>/exit.json`, written atomically once the task has exited and its logs are flushed. */
export interface ExitRecord {
  exitCode: number;
  /** Signal number that ended the task, 0 for none. */
  signal: number;
  finishedAt: number;
  err?: string;
  /** The kernel OOM-killed a process of the task's cgroup (err is then "OOM Killed"). */
  oomKilled?: boolean;
}

/** One request line on the executor's socket. `id` is echoed in the answer. */
export type ExecutorRequest =
  | { id?: number; op: 'status' }
  | { id?: number; op: 'wait' }
  | { id?: number; op: 'signal'; signal: string }
  | { id?: number; op: 'stop'; signal: string; timeoutMs: number };

export interface ExecutorStatus {
  running: boolean;
  pid: number;
  pgid: number;
  executorPid: number;
  isolation: ReadyOk['isolation'];
  exit?: ExitRecord;
}

/** One answer line. `wait` and `stop` answer once the task has exited, with `result`. */
export type ExecutorResponse =
  | { id?: number; ok: true; result?: ExitRecord; status?: ExecutorStatus }
  | { id?: number; ok: false; error: string; code?: 'ENOTRUNNING' | 'EBADREQ' | 'ESIGNAL' };
