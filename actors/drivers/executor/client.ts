/**
 * The host side of the supervisor: starting one (with its ready handshake), starting tasks
 * through it, talking to it over its unix socket, and reading what it and the shims leave in a
 * task's state dir. Nothing here keeps a handle, socket, timer or child process referenced once
 * its promise settles.
 * @module
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BerthError } from '../../../model/errors.ts';
import type { ExecutorResponse, ExecutorSpec, ExecutorState, ExitRecord, ReadyLine, SupervisorRequest } from './protocol.ts';
import { decodeStatus } from './shim.mjs';

/** The supervisor program shipped with berth. */
export const SUPERVISOR_PATH = fileURLToPath(new URL('./supervisor.mjs', import.meta.url));

/** sun_path holds 108 bytes including the terminating NUL. */
const MAX_SOCKET_PATH = 107;

/** The supervisor's socket path for its dir: `<dir>/supervisor.sock`, or a short /tmp path. */
export function supervisorSocketPath(dir: string): string {
  const p = path.join(dir, 'supervisor.sock');
  if (Buffer.byteLength(p) <= MAX_SOCKET_PATH) return p;
  const hash = createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 24);
  return path.join('/tmp', `berth-${hash}.sock`);
}

/**
 * The supervisor dir of a driver given none: one per user and berth install, under the temp dir
 * (a client passes `<dataDir>/client/supervisor`).
 */
export function defaultSupervisorDir(): string {
  const install = createHash('sha256').update(SUPERVISOR_PATH).digest('hex').slice(0, 12);
  return path.join(os.tmpdir(), `berth-supervisor-${process.getuid?.() ?? 0}-${install}`);
}

/** Files the executor uses in its state dir. */
export const stateFiles = (stateDir: string) => ({
  spec: path.join(stateDir, 'executor.json'),
  state: path.join(stateDir, 'state.json'),
  exit: path.join(stateDir, 'exit.json'),
  /** The shim's `$?` once the task exited (the supervisor turns it into exit.json). */
  status: path.join(stateDir, 'status'),
  stdoutFifo: path.join(stateDir, 'stdout.fifo'),
  stderrFifo: path.join(stateDir, 'stderr.fifo'),
  /** The shim's own stderr. */
  log: path.join(stateDir, 'executor.log'),
});

/** The executor could not be reached (gone, or not listening). */
export class ExecutorUnreachableError extends BerthError {
  constructor(
    readonly socketPath: string,
    readonly code: string | undefined,
  ) {
    super(`executor socket ${socketPath} unreachable${code ? ` (${code})` : ''}`);
  }
}

/** Field 22 of /proc/<pid>/stat (start time, clock ticks since boot), or undefined if no such process. */
export function procStartTime(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined; // zombie: it is gone
    return Number(fields[19]);
  } catch {
    return undefined;
  }
}

/** True when `pid` is alive and is the process that started at `startTime` (no pid reuse). */
export function isSameProcess(pid: number | undefined, startTime: number | undefined): boolean {
  if (!pid || pid <= 0) return false;
  const st = procStartTime(pid);
  return st !== undefined && (!startTime || st === startTime);
}

/**
 * True when a live (non-zombie) process is left in process group `pgid`. Zombies count as gone:
 * an orphaned task's zombies wait for whatever init reaps them, which may take a while.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  for (const name of fs.readdirSync('/proc')) {
    if (name.charCodeAt(0) > 57) continue; // not a pid
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
    } catch {}
  }
  return false;
}

/**
 * Pids of live shims launched with `specPath` (their command line names it): how a start
 * that was under way when the host died is found again.
 */
export function executorPidsFor(specPath: string): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (name.charCodeAt(0) > 57) continue; // not a pid
    try {
      const argv = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv.includes(specPath) && procStartTime(Number(name)) !== undefined) out.push(Number(name));
    } catch {}
  }
  return out;
}

/** Reads a JSON file; undefined when it is missing or not (yet) complete JSON. */
export function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/**
 * The task's recorded exit: the supervisor's exit.json, else the shim's bare status (a task that
 * exited while no supervisor ran; no OOM reading then).
 */
export function readExitRecord(stateDir: string): ExitRecord | undefined {
  const files = stateFiles(stateDir);
  const rec = readJson<ExitRecord>(files.exit);
  if (rec) return rec;
  try {
    const text = fs.readFileSync(files.status, 'utf8').trim();
    if (/^\d+$/.test(text)) return { ...decodeStatus(Number(text)), finishedAt: fs.statSync(files.status).mtimeMs };
  } catch {}
  return undefined;
}
export const readExecutorState = (stateDir: string) => readJson<ExecutorState>(stateFiles(stateDir).state);

/** Writes JSON atomically (temp file + rename). */
export function writeJsonAtomic(file: string, value: unknown): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** Resolves after `ms`, or rejects with `signal.reason`; leaves no timer or listener behind. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Where a driver's supervisor lives and how it is started. */
export interface SupervisorOptions {
  /** The supervisor's dir: its socket (when the path is short enough) and log. */
  dir: string;
  /** Node binary that runs the supervisor. */
  nodePath: string;
  /** The supervisor program. */
  supervisorPath: string;
  /** How long a start of the supervisor, and a task's start through it, may take. */
  timeoutMs: number;
}

/** Supervisor starts under way in this process, by socket path: one at a time per dir. */
const spawning = new Map<string, Promise<void>>();

/** Starts a supervisor for `o.dir` and waits for its ready line; fine when another one won the race. */
async function spawnSupervisor(o: SupervisorOptions, socketPath: string): Promise<void> {
  fs.mkdirSync(o.dir, { recursive: true, mode: 0o700 });
  const logFile = path.join(o.dir, 'supervisor.log');
  const logFd = fs.openSync(logFile, 'a', 0o600);
  let child;
  try {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    if (process.env.BERTH_SUPERVISOR_IDLE_MS) env.BERTH_SUPERVISOR_IDLE_MS = process.env.BERTH_SUPERVISOR_IDLE_MS;
    child = spawn(o.nodePath, [o.supervisorPath, o.dir, socketPath], { detached: true, cwd: '/', env, stdio: ['ignore', 'ignore', logFd, 'pipe'] });
  } finally {
    fs.closeSync(logFd);
  }
  const pipe = child.stdio[3] as net.Socket;
  try {
    const line = await new Promise<{ ok: boolean; code?: string; error?: string }>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => {
        try {
          process.kill(child.pid!, 'SIGKILL');
        } catch {}
        reject(new BerthError(`the task supervisor did not report ready within ${o.timeoutMs} ms (see ${logFile})`));
      }, o.timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        try {
          resolve(JSON.parse(text.split('\n')[0]!));
        } catch {
          let tail = '';
          try {
            tail = fs.readFileSync(logFile, 'utf8').trim().split('\n').slice(-3).join(' | ');
          } catch {}
          reject(new BerthError(`the task supervisor exited before it was ready${tail ? `: ${tail}` : ''}`));
        }
      };
      pipe.setEncoding('utf8');
      pipe.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('\n')) finish();
      });
      pipe.on('end', finish);
      pipe.on('error', finish);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(new BerthError(`cannot start the task supervisor with ${o.nodePath}: ${err.message}`));
      });
    });
    if (!line.ok && line.code !== 'EEXIST') throw new BerthError(line.error ?? 'the task supervisor failed to start');
  } finally {
    // Resolve only once the pipe is really closed: the host keeps nothing of the supervisor.
    if (!pipe.closed) {
      await new Promise<void>((resolve) => {
        pipe.once('close', () => resolve());
        pipe.destroy();
      });
    }
    child.removeAllListeners();
    child.unref();
  }
}

/**
 * Makes sure a supervisor answers on `o.dir`'s socket, starting one when none does (or the one
 * there is leaving), and returns the socket path.
 */
export async function ensureSupervisor(o: SupervisorOptions): Promise<string> {
  const socketPath = supervisorSocketPath(o.dir);
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await executorRequest(socketPath, { op: 'ping' }, { timeoutMs: o.timeoutMs });
      if (res.ok) return socketPath;
      if (res.code !== 'ESHUTDOWN') throw new BerthError(`the task supervisor refused a ping: ${res.error}`);
      await delay(Math.min(10 * (attempt + 1), 100)); // let the leaving one go
    } catch (err) {
      if (!(err instanceof ExecutorUnreachableError)) throw err;
    }
    if (attempt >= 20) throw new BerthError(`no task supervisor answers on ${socketPath}`);
    let p = spawning.get(socketPath);
    if (!p) {
      p = spawnSupervisor(o, socketPath).finally(() => spawning.delete(socketPath));
      spawning.set(socketPath, p);
    }
    await p;
  }
}

/**
 * Asks the supervisor of `o.dir` to leave now if it holds no task, and waits (bounded) until it is
 * gone; a supervisor that holds tasks stays. Nothing to do when none answers.
 */
export async function dismissSupervisor(o: SupervisorOptions): Promise<void> {
  const socketPath = supervisorSocketPath(o.dir);
  let res: ExecutorResponse;
  try {
    res = await executorRequest(socketPath, { op: 'leave' }, { timeoutMs: o.timeoutMs });
  } catch {
    return; // none answers
  }
  if (!res.ok || !res.leaving) return;
  const pid = res.leaving;
  for (let step = 1; isSameProcess(pid, undefined); step = Math.min(step * 2, 20)) await delay(step);
}

/**
 * Starts a task through the supervisor (starting one if needed) and returns its ready line. The
 * spec is on disk first: a supervisor that adopts the task later reads it there.
 */
export async function startOnSupervisor(spec: ExecutorSpec, o: SupervisorOptions): Promise<ReadyLine> {
  const files = stateFiles(spec.stateDir);
  const socketPath = supervisorSocketPath(o.dir);
  const full = { ...spec, socketPath };
  writeJsonAtomic(files.spec, full);
  for (let attempt = 0; ; attempt++) {
    await ensureSupervisor(o);
    let res: ExecutorResponse;
    try {
      res = await executorRequest(socketPath, { op: 'start', spec: full }, { timeoutMs: o.timeoutMs });
    } catch (err) {
      if (!(err instanceof ExecutorUnreachableError)) throw err;
      // The supervisor died (or hung) mid-start: a task that got as far as its state stays; else nothing may run.
      const state = readExecutorState(spec.stateDir);
      if (state && isSameProcess(state.executorPid, state.executorStartTime)) return { ok: true, ...state };
      for (const pid of executorPidsFor(files.spec)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
      if (err.code === 'ETIMEDOUT' || attempt >= 2)
        throw new BerthError(`the task supervisor did not answer the start within ${o.timeoutMs} ms (see ${path.join(o.dir, 'supervisor.log')})`);
      continue;
    }
    if (res.ok && res.ready) return res.ready;
    if (!res.ok && res.code === 'ESHUTDOWN' && attempt < 20) continue;
    throw new BerthError(`the task supervisor refused the start: ${res.ok ? 'no answer' : res.error}`);
  }
}

/**
 * Sends one request on a fresh connection and resolves with the answer. `signal` aborts it
 * (rejecting with `signal.reason` and closing the socket); `timeoutMs` bounds it, the waits for a
 * busy supervisor included. A connect refused with EAGAIN means the supervisor's accept queue is
 * full (hundreds of starts at once), not that it is gone: the request was not sent, so the
 * connect is tried again after a short backoff.
 * Throws {@link ExecutorUnreachableError} when nobody listens or the connection drops unanswered.
 */
export function executorRequest(
  socketPath: string,
  req: SupervisorRequest,
  opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<ExecutorResponse> {
  const { signal, timeoutMs } = opts;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    let sock: net.Socket | undefined;
    let buf = '';
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let backoff: NodeJS.Timeout | undefined;
    // Settles once the socket is really closed, so nothing of it outlives the promise.
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(backoff);
      signal?.removeEventListener('abort', onAbort);
      if (!sock || sock.closed) fn();
      else {
        sock.once('close', fn);
        sock.destroy();
      }
    };
    const onAbort = () => settle(() => reject(signal!.reason));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => settle(() => reject(new ExecutorUnreachableError(socketPath, 'ETIMEDOUT'))), timeoutMs);
    }
    const connect = (busyTries: number) => {
      const s = net.createConnection(socketPath);
      sock = s;
      let connected = false;
      s.setEncoding('utf8');
      s.on('connect', () => {
        connected = true;
        s.write(JSON.stringify(req) + '\n');
      });
      s.on('data', (chunk: string) => {
        buf += chunk;
        const nl = buf.indexOf('\n');
        if (nl < 0) return;
        const line = buf.slice(0, nl);
        settle(() => {
          try {
            resolve(JSON.parse(line) as ExecutorResponse);
          } catch {
            reject(new ExecutorUnreachableError(socketPath, 'EPROTO'));
          }
        });
      });
      s.on('error', (err: NodeJS.ErrnoException) => {
        if (settled) return;
        if (!connected && err.code === 'EAGAIN') {
          // Busy, not gone: wait for this socket to close, then connect again (1, 2, 4 ... 50 ms).
          s.removeAllListeners('close');
          s.once('close', () => {
            if (!settled) backoff = setTimeout(() => connect(busyTries + 1), Math.min(2 ** busyTries, 50));
          });
          s.destroy();
          return;
        }
        settle(() => reject(new ExecutorUnreachableError(socketPath, err.code)));
      });
      s.on('close', () => settle(() => reject(new ExecutorUnreachableError(socketPath, 'ECONNRESET'))));
    };
    connect(0);
  });
}
