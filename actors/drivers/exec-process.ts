/**
 * One command run inside a running task (Nomad's `alloc exec`, and script checks): a child in
 * its own process group, joined to the task's cgroup before it runs anything, its output streamed
 * as it comes and kept in bounded copies, its whole group killed on cancellation or timeout.
 *
 * ```
 *  sh -c 'join cgroups; exec "$@"' -- <file> <args>     (own process group)
 *     stdin  ◄── Buffer | string | AsyncIterable<Buffer>
 *     stdout ──► onOutput('stdout', chunk) + first maxOutputBytes kept
 *     stderr ──► onOutput('stderr', chunk) + first maxOutputBytes kept
 *                (onOutput returns a promise ⇒ both pipes paused until it settles:
 *                 a slow consumer blocks the command's writes, nothing piles up here)
 *  abort ──► SIGKILL the group, reject with the abort reason
 *  timeoutMs ──► SIGKILL the group, reject with TimeoutError
 * ```
 * The cgroup is joined by the child itself (it writes its own pid into each `cgroup.procs`
 * before the `exec`), so the host process never moves.
 * @module
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { BerthError, TimeoutError } from '../../model/errors.ts';
import { signalNumber } from './signals.ts';

/** Default bound on each kept output copy (the stream itself is not bounded). */
export const DEFAULT_EXEC_OUTPUT_BYTES = 1024 * 1024;

/**
 * Takes one output chunk of an exec. Returning a promise says "not now": the command's pipes stay
 * paused until it settles.
 */
export type OutputSink = (stream: 'stdout' | 'stderr', chunk: Buffer) => void | Promise<void>;

/** Where and how to run one exec. */
export interface ExecSpawn {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** cgroup directories to join (their `cgroup.procs`) before the command runs. */
  cgroupDirs?: string[];
}

/** Options of {@link runExec} (and of `Driver.exec`). */
export interface RunExecOptions {
  stdin?: string | Buffer | AsyncIterable<Buffer>;
  signal?: AbortSignal;
  /** Kill the command after this long; rejects with TimeoutError. */
  timeoutMs?: number;
  /**
   * Each chunk as it arrives. A returned promise pauses the command's stdout and stderr pipes
   * until it settles (back-pressure: the command's writes block once the pipe is full).
   */
  onOutput?: OutputSink;
  /** Bound on each kept copy; default {@link DEFAULT_EXEC_OUTPUT_BYTES}. */
  maxOutputBytes?: number;
}

/** How an exec ended. */
export interface RunExecResult {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
  /** Signal number that ended it, 0 for none. */
  signal: number;
  /** The command could not be run (not found, not executable). */
  err?: string;
}

/** An exec into a task that cannot run (task not running, no command). */
export class ExecError extends BerthError {}

const JOIN_AND_EXEC = 'IFS="\n"; for f in $BERTH_EXEC_CGROUPS; do echo $$ > "$f/cgroup.procs" || exit 126; done; unset BERTH_EXEC_CGROUPS; exec "$@"';

/** A bounded copy of a stream. */
class Kept {
  readonly #parts: Buffer[] = [];
  #n = 0;
  constructor(readonly max: number) {}
  add(c: Buffer) {
    if (this.#n >= this.max) return;
    const part = c.length + this.#n > this.max ? c.subarray(0, this.max - this.#n) : c;
    this.#parts.push(part);
    this.#n += part.length;
  }
  get value() {
    return Buffer.concat(this.#parts);
  }
}

/** Runs one exec (see the module doc). Rejects only on abort or timeout. */
export function runExec(s: ExecSpawn, opts: RunExecOptions = {}): Promise<RunExecResult> {
  const { signal } = opts;
  if (!s.file) return Promise.reject(new ExecError('exec: no command given'));
  if (signal?.aborted) return Promise.reject(signal.reason);
  const max = opts.maxOutputBytes ?? DEFAULT_EXEC_OUTPUT_BYTES;
  return new Promise<RunExecResult>((resolve, reject) => {
    const env = { ...s.env, ...(s.cgroupDirs?.length ? { BERTH_EXEC_CGROUPS: s.cgroupDirs.join('\n') } : {}) };
    const child = spawn('/bin/sh', ['-c', JOIN_AND_EXEC, 'sh', s.file, ...s.args], { cwd: s.cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const out = new Kept(max);
    const err = new Kept(max);
    let failure: unknown;
    let timer: NodeJS.Timeout | undefined;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {}
    };
    const stop = (reason: unknown) => {
      failure ??= reason;
      killGroup();
    };
    const onAbort = () => stop(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.timeoutMs !== undefined) {
      timer = setTimeout(() => stop(new TimeoutError(`exec: ${path.basename(s.file)} timed out after ${opts.timeoutMs} ms`)), opts.timeoutMs);
    }
    // A consumer that asks to wait pauses both pipes: the kernel's pipe buffer fills and the
    // command blocks in write(2), so a stalled reader costs at most a pipe's worth here.
    let waits = 0;
    const deliver = (stream: 'stdout' | 'stderr', c: Buffer) => {
      const later = opts.onOutput?.(stream, c);
      if (!later) return;
      if (waits++ === 0) {
        child.stdout.pause();
        child.stderr.pause();
      }
      const resume = () => {
        if (--waits > 0) return;
        child.stdout.resume();
        child.stderr.resume();
      };
      later.then(resume, resume);
    };
    child.stdout.on('data', (c: Buffer) => {
      out.add(c);
      deliver('stdout', c);
    });
    child.stderr.on('data', (c: Buffer) => {
      err.add(c);
      deliver('stderr', c);
    });
    child.stdin.on('error', () => undefined); // the command may exit without reading its input
    void feed(child.stdin, opts.stdin);
    child.on('error', (e) => stop(e));
    child.on('close', (code, sig) => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      killGroup(); // whatever the command left in its group goes with it
      if (failure) return reject(failure);
      const exitCode = code ?? 128 + (sig ? signalNumber(sig) : 0);
      const result: RunExecResult = { stdout: out.value, stderr: err.value, exitCode, signal: sig ? signalNumber(sig) : 0 };
      // sh's own codes for a command it could not run.
      if (code === 127) result.err = `exec: ${JSON.stringify(s.file)}: executable file not found`;
      else if (code === 126) result.err = `exec: ${JSON.stringify(s.file)}: permission denied or cgroup not joinable`;
      resolve(result);
    });
  });
}

async function feed(stdin: NodeJS.WritableStream, input: RunExecOptions['stdin']): Promise<void> {
  try {
    if (input === undefined) return;
    if (typeof input === 'string' || Buffer.isBuffer(input)) {
      stdin.write(input);
      return;
    }
    for await (const c of input) {
      if (!stdin.write(c)) await new Promise((r) => stdin.once('drain', r));
    }
  } catch {
    /* the command went away: nothing more to write */
  } finally {
    stdin.end();
  }
}
