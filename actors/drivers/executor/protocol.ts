/**
 * The supervisor's on-disk and wire formats (types only: `supervisor.mjs` imports them through JSDoc).
 *
 * ```
 *  host (driver)                         supervisor (detached, one per client)     shim (sh, one per task)   task
 *  no answer on <dir>/supervisor.sock ─► node supervisor.mjs <dir> <socket>
 *  fd 3  ◄── { ok: true } once listening, then fd 3 closed
 *  write <stateDir>/executor.json
 *  { op: 'start', spec } ──────────────► spawn (detached) ─────────────────────► mkfifo, hold FIFOs
 *                                                                                 setsid ──exec──────────►  runs
 *  ◄── { ready: ReadyLine }  ◄──────────── its pid, from inside the cgroup          stdout/stderr ◄── FIFOs
 *                                        state.json (atomic)     <logs>/<task>.stdout.N, .stderr.N
 *  { op: 'wait' | 'stop' | 'signal' | 'status', stateDir } ─► one JSON answer line per request (with its id)
 *                                                                                 task exits: status ($?), exit
 *                                        kill -KILL -pgid and the cgroup, drain + close logs,
 *                                        exit.json (atomic), answer waiters
 * ```
 * @module
 */
import type { TaskCgroup } from '../../cgroups/types.ts';

/** What the driver writes to `<stateDir>/executor.json` and sends in a `start` request. */
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
  /** The supervisor's socket. */
  socketPath: string;
  /** The task's cgroup: the task joins it before its exec, and at exit everything in it is killed. */
  cgroup?: TaskCgroup;
  /** The task's kill signal and timeout (the host sends them with each stop). */
  killSignal: string;
  killTimeoutMs: number;
}

/** The answer to a `start` when the task is running. */
export interface ReadyOk {
  ok: true;
  /** The task's shim: its parent for life (named "executor" as in Nomad, where one process per task holds it). */
  executorPid: number;
  /** /proc/<pid>/stat field 22 (clock ticks since boot) of the shim. */
  executorStartTime: number;
  /** The supervisor that started (or adopted) the task. */
  supervisorPid?: number;
  /** The process group leader the shim runs (the task for raw; `unshare`/`chroot` for exec). */
  pid: number;
  pgid: number;
  startTime: number;
  isolation: 'none' | 'chroot' | 'chroot+pid+mount';
  /** The absolute path the command resolved to (inside the chroot for exec). */
  command: string;
  socketPath: string;
}
/** The answer to a `start` when the task could not be started. */
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

/** One request about a task, named by its state dir. `id` is echoed in the answer. */
export type ExecutorRequest =
  | { id?: number; op: 'status' }
  | { id?: number; op: 'wait' }
  | { id?: number; op: 'signal'; signal: string }
  | { id?: number; op: 'stop'; signal: string; timeoutMs: number };

/** One request line on the supervisor's socket. */
export type SupervisorRequest =
  | { id?: number; op: 'ping' }
  /** Leave now if no task is held (answered with `leaving`: the supervisor's pid), else stay. */
  | { id?: number; op: 'leave' }
  | { id?: number; op: 'start'; spec: ExecutorSpec }
  | (ExecutorRequest & { stateDir: string });

export interface ExecutorStatus {
  running: boolean;
  pid: number;
  pgid: number;
  executorPid: number;
  isolation: ReadyOk['isolation'];
  exit?: ExitRecord;
}

/**
 * One answer line. `wait` and `stop` answer once the task has exited, with `result`; `start`
 * with `ready`. `ELOST`: the task's shim is gone without recording its exit; `ESHUTDOWN`: the
 * supervisor is leaving (idle), ask a new one; `EEXIST`: a task already runs in that state dir.
 */
export type ExecutorResponse =
  | { id?: number; ok: true; result?: ExitRecord; status?: ExecutorStatus; ready?: ReadyLine; leaving?: number }
  | { id?: number; ok: false; error: string; code?: 'ENOTRUNNING' | 'EBADREQ' | 'ESIGNAL' | 'ELOST' | 'ESHUTDOWN' | 'EEXIST' };
