/**
 * The host side of the executor: launching one (with its ready handshake), talking to it over its
 * unix socket, and reading what it leaves in the state dir. Nothing here keeps a handle, socket,
 * timer or child process referenced once its promise settles.
 * @module
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BerthError } from '../../../model/errors.ts';
import type { ExecutorRequest, ExecutorResponse, ExecutorSpec, ExecutorState, ExitRecord, ReadyLine } from './protocol.ts';

/** The executor program shipped with berth. */
export const EXECUTOR_PATH = fileURLToPath(new URL('./executor.mjs', import.meta.url));

/** sun_path holds 108 bytes including the terminating NUL. */
const MAX_SOCKET_PATH = 107;

/** The executor's socket path for a state dir: `<stateDir>/executor.sock`, or a short /tmp path. */
export function socketPathFor(stateDir: string): string {
  const p = path.join(stateDir, 'executor.sock');
  if (Buffer.byteLength(p) <= MAX_SOCKET_PATH) return p;
  const hash = createHash('sha256').update(path.resolve(stateDir)).digest('hex').slice(0, 24);
  return path.join('/tmp', `berth-${hash}.sock`);
}

/** Files the executor uses in its state dir. */
export const stateFiles = (stateDir: string) => ({
  spec: path.join(stateDir, 'executor.json'),
  state: path.join(stateDir, 'state.json'),
  exit: path.join(stateDir, 'exit.json'),
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
 * Pids of live executors launched with `specPath` (their command line names it): how a start
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

export const readExitRecord = (stateDir: string) => readJson<ExitRecord>(stateFiles(stateDir).exit);
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

export interface LaunchOptions {
  spec: ExecutorSpec;
  nodePath: string;
  executorPath: string;
  /** Give up (and kill the executor) when no ready line arrives in time. */
  timeoutMs: number;
}

/**
 * Starts a detached executor and waits for its ready line on fd 3. The host keeps nothing of it:
 * the pipe is closed and the child unref'd. Throws BerthError when the executor dies or hangs.
 */
export async function launchExecutor(opts: LaunchOptions): Promise<ReadyLine> {
  const { spec } = opts;
  const files = stateFiles(spec.stateDir);
  writeJsonAtomic(files.spec, spec);
  const logFd = fs.openSync(files.log, 'a', 0o600);
  let child;
  try {
    child = spawn(opts.nodePath, [opts.executorPath, files.spec], {
      detached: true,
      cwd: '/',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['ignore', 'ignore', logFd, 'pipe'],
    });
  } finally {
    fs.closeSync(logFd);
  }
  const pipe = child.stdio[3] as net.Socket;
  try {
    return await new Promise<ReadyLine>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => {
        try {
          process.kill(child.pid!, 'SIGKILL');
        } catch {}
        reject(new BerthError(`executor did not report ready within ${opts.timeoutMs} ms (see ${files.log})`));
      }, opts.timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        const line = text.split('\n')[0]!;
        try {
          resolve(JSON.parse(line) as ReadyLine);
        } catch {
          let tail = '';
          try {
            tail = fs.readFileSync(files.log, 'utf8').trim().split('\n').slice(-3).join(' | ');
          } catch {}
          reject(new BerthError(`executor exited before it was ready${tail ? `: ${tail}` : ''}`));
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
        reject(new BerthError(`cannot start executor ${opts.nodePath}: ${err.message}`));
      });
    });
  } finally {
    // Resolve only once the pipe is really closed: the host keeps nothing of the executor.
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
 * Sends one request on a fresh connection and resolves with the answer. `signal` aborts it
 * (rejecting with `signal.reason` and closing the socket); `timeoutMs` bounds it.
 * Throws {@link ExecutorUnreachableError} when nobody listens or the connection drops unanswered.
 */
export function executorRequest(socketPath: string, req: ExecutorRequest, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<ExecutorResponse> {
  const { signal, timeoutMs } = opts;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const sock = net.createConnection(socketPath);
    let buf = '';
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    // Settles once the socket is really closed, so nothing of it outlives the promise.
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (sock.closed) fn();
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
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(JSON.stringify(req) + '\n'));
    sock.on('data', (chunk: string) => {
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
    sock.on('error', (err: NodeJS.ErrnoException) => settle(() => reject(new ExecutorUnreachableError(socketPath, err.code))));
    sock.on('close', () => settle(() => reject(new ExecutorUnreachableError(socketPath, 'ECONNRESET'))));
  });
}
