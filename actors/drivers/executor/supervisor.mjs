// @ts-check
/**
 * berth's task supervisor: `node supervisor.mjs <dir> <socketPath>`, one per supervisor dir (one
 * per client: raw_exec and exec tasks alike). It starts each task under a shim (./shim.mjs: the
 * task's parent for life, a few hundred KB), rotates the task's logs from the shim's FIFOs, stops
 * and signals tasks, records `state.json` and `exit.json` in each task's state dir, and answers
 * JSON-lines requests (start, status, wait, signal, stop) on one unix socket.
 *
 * It outlives the host process, and a SIGKILL of it loses no task: the shims go on holding their
 * tasks and record each exit in `<stateDir>/status`; the next supervisor (the host starts one when
 * it finds none) adopts a task from its state dir on the first request that names it, opens its
 * FIFOs again and finishes what the dead one did not (the group and cgroup kill, the exit record).
 * With no task left it exits after a short idle time, so nothing of berth runs while no task does.
 *
 * Startup handshake: fd 3 is a pipe to whoever started it; one line is written there (`{ ok: true }`
 * once listening, `{ ok: false, code: 'EEXIST' }` when another supervisor already serves the dir),
 * then it is closed. Plain JavaScript, so that it starts in ~40 ms. Types: ./protocol.ts.
 *
 * @typedef {import('./protocol.ts').ExecutorSpec} ExecutorSpec
 * @typedef {import('./protocol.ts').SupervisorRequest} SupervisorRequest
 * @typedef {import('./protocol.ts').ExecutorResponse} ExecutorResponse
 * @typedef {import('./protocol.ts').ExitRecord} ExitRecord
 * @typedef {import('./protocol.ts').ReadyLine} ReadyLine
 * @typedef {import('./protocol.ts').ReadyOk} ReadyOk
 * @typedef {import('./protocol.ts').ExecutorState} ExecutorState
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { FileRotator, rotatingStream } from '../logs/rotator.mjs';
import { killCgroup, oomKillCount, removeCgroup } from '../../cgroups/procs.mjs';
import { childrenOf, errnoText, kill, procStartTime, resolveCommand, toSignal, writeJsonAtomic } from './command.mjs';
import { CGROUP_JOIN_FAILED, decodeStatus, shimCommand } from './shim.mjs';

const READY_FD = 3;
/** How long to wait for a task's FIFOs to drain after its group was killed. */
const DRAIN_TIMEOUT_MS = 2000;
/** With no task and no request, exit after this long. */
const IDLE_MS = Number(process.env.BERTH_SUPERVISOR_IDLE_MS) || 300;
/** How often adopted tasks (not our children: no exit event) are looked at. */
const ADOPTED_POLL_MS = 250;

const [dir, socketPath] = process.argv.slice(2);
if (!dir || !socketPath) {
  process.stderr.write('usage: supervisor.mjs <dir> <socketPath>\n');
  process.exit(2);
}

let problems = 0;
/** A problem, in the supervisor's log. @param {...unknown} parts */
function log(...parts) {
  problems++;
  try {
    fs.writeSync(2, `${new Date().toISOString()} supervisor[${process.pid}] ${parts.join(' ')}\n`);
  } catch {}
}
/** A routine step: logged only with BERTH_SUPERVISOR_TRACE set. @param {...unknown} parts */
function trace(...parts) {
  if (!process.env.BERTH_SUPERVISOR_TRACE) return;
  try {
    fs.writeSync(2, `${new Date().toISOString()} supervisor[${process.pid}] ${parts.join(' ')}\n`);
  } catch {}
}

/** @param {{ ok: boolean, code?: string, error?: string }} line */
function sendReady(line) {
  try {
    fs.writeSync(READY_FD, JSON.stringify({ ...line, pid: process.pid }) + '\n');
  } catch {}
  try {
    fs.closeSync(READY_FD);
  } catch {}
}

process.on('uncaughtException', (err) => log('uncaught:', err?.stack ?? err));
process.on('SIGHUP', () => {});
// A SIGTERM ends the supervisor, never a task: the shims hold them and the next supervisor adopts them.
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));

const SYSTEM_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin'];
/** @param {string} name */
function findTool(name) {
  for (const d of SYSTEM_DIRS) {
    const p = path.join(d, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {}
  }
  return undefined;
}
const toolPaths = { sh: findTool('sh'), setsid: findTool('setsid'), mkfifo: findTool('mkfifo'), mv: findTool('mv'), env: findTool('env') };
const missingTools = Object.entries(toolPaths)
  .filter(([, p]) => !p)
  .map(([n]) => n);
const tools = /** @type {import('./shim.mjs').ShimTools} */ (toolPaths);

/** Files of a task's state dir. @param {string} stateDir */
const files = (stateDir) => ({
  spec: path.join(stateDir, 'executor.json'),
  state: path.join(stateDir, 'state.json'),
  exit: path.join(stateDir, 'exit.json'),
  status: path.join(stateDir, 'status'),
  stdout: path.join(stateDir, 'stdout.fifo'),
  stderr: path.join(stateDir, 'stderr.fifo'),
  shimLog: path.join(stateDir, 'executor.log'),
});

/** @template T @param {string} file @returns {T | undefined} */
function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The shim's recorded `$?`, or undefined while there is none. @param {string} file */
function readStatus(file) {
  try {
    const text = fs.readFileSync(file, 'utf8').trim();
    return /^\d+$/.test(text) ? Number(text) : undefined;
  } catch {
    return undefined;
  }
}

/** True when `pid` is alive (not a zombie) and started at `startTime`. @param {number} pid @param {number} [startTime] */
function sameProcess(pid, startTime) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return false;
    return !startTime || Number(fields[19]) === startTime;
  } catch {
    return false;
  }
}

/** The files a pid is written to so it joins the task's cgroup. @param {ExecutorSpec['cgroup']} cg */
function cgroupProcsFiles(cg) {
  if (!cg) return [];
  return [...new Set(Object.values(cg.paths))].map((d) => path.join(d, 'cgroup.procs'));
}

/** The command line the shim execs: the task, or (exec) unshare/chroot around it. @param {ExecutorSpec} spec @param {string} command @param {string} hostPath */
function taskCommandLine(spec, command, hostPath) {
  if (spec.mode !== 'chroot') return { file: hostPath, args: spec.args, isolation: /** @type {const} */ ('none') };
  const c = /** @type {NonNullable<ExecutorSpec['chroot']>} */ (spec.chroot);
  const root = spec.taskDir;
  const userspec = `--userspec=${c.uid}:${c.gid}`;
  if (c.namespaces && c.unshare && c.mount && c.shell) {
    for (const d of ['proc', 'dev']) fs.mkdirSync(path.join(root, d), { recursive: true });
    // Runs in the new mount namespace before the chroot, then execs into it (so the task keeps
    // PID 1 of its namespace): a minimal private /dev; the /proc mount comes from --mount-proc.
    // Every mount vanishes with the namespace. All are nosuid,nodev,noexec: the device nodes are
    // bind mounts of their own (carrying /dev's flags), so nodev on the tmpfs does not touch them.
    const setup = [
      'set -e',
      'm="$1"; r="$2"; c="$3"; shift 3',
      '"$m" -t tmpfs -o mode=755,nosuid,nodev,noexec,size=64k berth-dev "$r/dev"',
      'for d in null zero full random urandom tty; do : > "$r/dev/$d"; "$m" --bind "/dev/$d" "$r/dev/$d"; done',
      'mkdir "$r/dev/shm" "$r/dev/pts"',
      '"$m" -t tmpfs -o mode=1777,nosuid,nodev,noexec berth-shm "$r/dev/shm"',
      'ln -s /proc/self/fd "$r/dev/fd"; ln -s /proc/self/fd/0 "$r/dev/stdin"',
      'ln -s /proc/self/fd/1 "$r/dev/stdout"; ln -s /proc/self/fd/2 "$r/dev/stderr"',
      'exec "$c" "$@"',
    ].join('\n');
    return {
      file: c.unshare,
      args: [
        '--pid',
        '--mount',
        '--fork',
        '--kill-child',
        `--mount-proc=${path.join(root, 'proc')}`,
        c.shell,
        '-c',
        setup,
        'berth-init',
        c.mount,
        root,
        c.chroot,
        userspec,
        root,
        command,
        ...spec.args,
      ],
      isolation: /** @type {const} */ ('chroot+pid+mount'),
    };
  }
  return { file: c.chroot, args: [userspec, root, command, ...spec.args], isolation: /** @type {const} */ ('chroot') };
}

/** A start that fails: the message and whether a retry may help. */
class StartFailure extends Error {
  /** @param {string} message @param {boolean} recoverable */
  constructor(message, recoverable) {
    super(message);
    this.recoverable = recoverable;
  }
}

/** The last lines of a shim's log, for a start failure's message. @param {string} file */
function logTail(file) {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-2).join(' | ');
  } catch {
    return '';
  }
}

// ------------------------------------------------------------------------------------------------

/** One task this supervisor holds: started by it, or adopted from its state dir. */
class Task {
  /**
   * @param {ExecutorSpec} spec
   * @param {ReadyOk} ready
   * @param {number} startedAt
   * @param {{ stdout: number, stderr: number }} logIndex
   */
  constructor(spec, ready, startedAt, logIndex) {
    this.spec = spec;
    this.ready = ready;
    this.startedAt = startedAt;
    this.files = files(spec.stateDir);
    this.logIndex = logIndex;
    /** @type {ExitRecord | undefined} */
    this.exitRecord = undefined;
    /** @type {Array<(r: ExitRecord | undefined) => void>} */
    this.waiters = [];
    /** @type {NodeJS.Timeout | undefined} */
    this.killTimer = undefined;
    this.killDeadline = Infinity;
    this.finishing = false;
    /** @type {Promise<unknown>[]} */
    this.drains = [];
    /** @type {Array<{ socket: net.Socket, stream: import('node:stream').Writable }>} */
    this.pipes = [];
    this.stateWritePending = false;
  }

  /** Opens the task's FIFOs and pipes them into rotated log files (pausing while a write is pending). */
  attachLogs() {
    for (const stream of /** @type {const} */ (['stdout', 'stderr'])) {
      const rotator = new FileRotator({
        dir: this.spec.logs.dir,
        baseName: `${this.spec.taskName}.${stream}`,
        maxFiles: this.spec.logs.maxFiles,
        fileSize: this.spec.logs.maxFileSizeBytes,
        onRotate: (i) => {
          this.logIndex[stream] = i;
          this.scheduleStateWrite();
        },
      });
      rotator.open();
      this.logIndex[stream] = rotator.index;
      let fd;
      try {
        fd = fs.openSync(this.files[stream], fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      } catch (err) {
        log(`${this.spec.id}: ${stream} FIFO not opened:`, errnoText(err));
        void rotator.close();
        continue;
      }
      const socket = new net.Socket({ fd, readable: true, writable: false });
      const out = rotatingStream(rotator);
      this.drains.push(
        new Promise((resolve) => {
          out.on('error', (err) => {
            log(`${this.spec.id}: log write failed:`, err.message);
            socket.resume(); // keep reading (and dropping) so the task never blocks on a dead log
            resolve(undefined);
          });
          out.on('finish', () => resolve(undefined));
          out.on('close', () => resolve(undefined));
          socket.on('error', () => out.end());
          socket.pipe(out);
        }),
      );
      this.pipes.push({ socket, stream: out });
    }
  }

  scheduleStateWrite() {
    if (this.stateWritePending) return;
    this.stateWritePending = true;
    setImmediate(() => {
      this.stateWritePending = false;
      this.writeState();
    });
  }

  writeState() {
    const { ok: _ok, ...rest } = this.ready;
    /** @type {ExecutorState} */
    const state = { ...rest, startedAt: this.startedAt, logs: { dir: this.spec.logs.dir, ...this.logIndex } };
    try {
      writeJsonAtomic(this.files.state, state);
    } catch (err) {
      log('state.json not written:', errnoText(err));
    }
  }

  /** @returns {Promise<ExitRecord | undefined>} undefined: the shim was lost */
  done() {
    if (this.exitRecord) return Promise.resolve(this.exitRecord);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The process signals are sent to: the task (for exec with namespaces, unshare's child). */
  taskPid() {
    if (this.ready.isolation !== 'chroot+pid+mount') return this.ready.pid;
    return childrenOf(this.ready.pid)[0] ?? this.ready.pid;
  }

  /** Sends `sig` to the task's process group; SIGKILL follows after `timeoutMs`. @param {NodeJS.Signals} sig @param {number} timeoutMs */
  stop(sig, timeoutMs) {
    if (this.finishing) return;
    const pgid = this.ready.pgid;
    if (sig === 'SIGKILL' || timeoutMs <= 0) {
      kill(-pgid, 'SIGKILL');
      return;
    }
    kill(-pgid, sig);
    const deadline = Date.now() + timeoutMs;
    if (deadline < this.killDeadline) {
      this.killDeadline = deadline;
      clearTimeout(this.killTimer);
      this.killTimer = setTimeout(() => kill(-pgid, 'SIGKILL'), timeoutMs);
    }
  }

  /** The shim is gone without a status: the task's exit cannot be known. */
  lose() {
    if (this.finishing) return;
    this.finishing = true;
    clearTimeout(this.killTimer);
    log(`${this.spec.id}: the shim (pid ${this.ready.executorPid}) is gone without recording the task's exit`);
    for (const p of this.pipes) p.socket.destroy();
    forget(this);
    for (const resolve of this.waiters.splice(0)) resolve(undefined);
  }

  /** The task exited with shell status `status`: clean up after it, record it, answer. @param {number} status */
  async finish(status) {
    if (this.finishing) return;
    this.finishing = true;
    clearTimeout(this.killTimer);
    const spec = this.spec;
    // No grandchild survives the task: not in its process group, nor (setsid, double fork) in its cgroup.
    kill(-this.ready.pgid, 'SIGKILL');
    if (spec.cgroup && !(await killCgroup(spec.cgroup))) log(`${spec.id}: processes left in the task cgroup after SIGKILL`);
    /** @type {ExitRecord} */
    const record = { ...decodeStatus(status), finishedAt: 0 };
    if (spec.cgroup && (oomKillCount(spec.cgroup) ?? 0) > 0) {
      record.oomKilled = true;
      record.err = 'OOM Killed';
    }
    // Removed here too, so no empty cgroup outlives a host that never comes back.
    if (spec.cgroup && !(await removeCgroup(spec.cgroup))) log(`${spec.id}: the task cgroup could not be removed`);
    const timer = setTimeout(() => {
      log(`${spec.id}: task pipes still open after its group was killed; closing them`);
      for (const p of this.pipes) {
        p.socket.destroy();
        p.stream.end();
      }
    }, DRAIN_TIMEOUT_MS);
    await Promise.all(this.drains);
    clearTimeout(timer);
    record.finishedAt = Date.now();
    try {
      writeJsonAtomic(this.files.exit, record);
    } catch (err) {
      log('exit.json not written:', errnoText(err));
    }
    for (const f of [this.files.stdout, this.files.stderr, this.files.status]) fs.rmSync(f, { force: true });
    this.exitRecord = record;
    forget(this);
    for (const resolve of this.waiters.splice(0)) resolve(record);
  }

  /** For a task that is not our child: has its shim recorded an exit, or gone without one? */
  check() {
    if (this.finishing) return;
    const status = readStatus(this.files.status);
    if (status !== undefined) void this.finish(status);
    else if (!sameProcess(this.ready.executorPid, this.ready.executorStartTime)) {
      // The shim may have written the status right before exiting: read it once more.
      const late = readStatus(this.files.status);
      if (late !== undefined) void this.finish(late);
      else this.lose();
    }
  }
}

/** Tasks by state dir. @type {Map<string, Task>} */
const tasks = new Map();
/** Starts under way, by state dir (a request about one waits for it). @type {Map<string, Promise<unknown>>} */
const starting = new Map();
/** @type {Set<Task>} */
const adopted = new Set();
/** @type {NodeJS.Timeout | undefined} */
let adoptedPoll;

/** @param {Task} task */
function forget(task) {
  if (tasks.get(task.spec.stateDir) === task) tasks.delete(task.spec.stateDir);
  adopted.delete(task);
  if (!adopted.size) {
    clearInterval(adoptedPoll);
    adoptedPoll = undefined;
  }
  idleCheck();
}

/** Starts a task under a new shim. @param {ExecutorSpec} spec @returns {Promise<ReadyOk>} */
async function startTask(spec) {
  if (missingTools.length) throw new StartFailure(`the supervisor cannot start tasks: ${missingTools.join(', ')} not found in ${SYSTEM_DIRS.join(':')}`, false);
  const resolved = resolveCommand(spec);
  if (!resolved.ok) throw new StartFailure(resolved.error, false);
  const f = files(spec.stateDir);
  for (const p of [f.stdout, f.stderr, f.status, `${f.status}.tmp`, f.exit]) fs.rmSync(p, { force: true });
  const line = taskCommandLine(spec, resolved.command, resolved.hostPath);
  const cmd = shimCommand({
    tools,
    specPath: f.spec,
    statusFile: f.status,
    stdoutFifo: f.stdout,
    stderrFifo: f.stderr,
    cgroupProcs: cgroupProcsFiles(spec.cgroup),
    env: spec.env,
    file: line.file,
    args: line.args,
  });
  let logFd;
  try {
    logFd = fs.openSync(f.shimLog, 'a', 0o600);
  } catch (err) {
    throw new StartFailure(`failed to open ${f.shimLog}: ${errnoText(err)}`, true);
  }
  /** @type {import('node:child_process').ChildProcess} */
  let shim;
  try {
    shim = spawn(cmd.file, cmd.argv, { cwd: spec.mode === 'chroot' ? '/' : spec.taskDir, env: cmd.env, detached: true, stdio: ['pipe', 'pipe', logFd] });
  } catch (err) {
    throw new StartFailure(`fork/exec ${resolved.command}: ${errnoText(err)}`, false);
  } finally {
    fs.closeSync(logFd);
  }
  const startedAt = Date.now();
  // The inner shell says its pid once it is in the task's cgroup, right before the exec.
  const pid = await new Promise((resolve, reject) => {
    let text = '';
    const stdout = /** @type {import('node:stream').Readable} */ (shim.stdout);
    stdout.setEncoding('utf8');
    const onData = (/** @type {string} */ chunk) => {
      text += chunk;
      const nl = text.indexOf('\n');
      if (nl >= 0) {
        stdout.off('data', onData);
        stdout.resume();
        shim.off('exit', onExit);
        resolve(Number(text.slice(0, nl)));
      }
    };
    const onExit = (/** @type {number | null} */ code) => {
      shim.stdin?.destroy();
      const tail = logTail(f.shimLog);
      if (code === CGROUP_JOIN_FAILED) reject(new StartFailure(tail || `could not join the task cgroup`, true));
      else reject(new StartFailure(`fork/exec ${resolved.command}: the task did not start${tail ? `: ${tail}` : ''}`, false));
    };
    stdout.on('data', onData);
    shim.once('exit', onExit);
    shim.once('error', (err) => reject(new StartFailure(`fork/exec ${resolved.command}: ${errnoText(err)}`, false)));
  });
  /** @type {ReadyOk} */
  const ready = {
    ok: true,
    executorPid: /** @type {number} */ (shim.pid),
    executorStartTime: procStartTime(/** @type {number} */ (shim.pid)) ?? 0,
    supervisorPid: process.pid,
    pid,
    pgid: pid,
    startTime: procStartTime(pid) ?? 0,
    isolation: line.isolation,
    command: resolved.command,
    socketPath,
  };
  const task = new Task(spec, ready, startedAt, { stdout: 0, stderr: 0 });
  try {
    task.attachLogs();
  } catch (err) {
    log(`${spec.id}: log files not opened in ${spec.logs.dir}:`, errnoText(err));
  }
  task.writeState();
  tasks.set(spec.stateDir, task);
  // Go: the FIFOs are read from here on. The pipe closes with it, so the shim holds nothing of ours.
  const stdin = /** @type {import('node:stream').Writable} */ (shim.stdin);
  stdin.on('error', () => {});
  stdin.end('go\n');
  shim.on('exit', (code, signal) => {
    if (signal || code === null) {
      // Killed itself: the status (if any) was written before.
      const status = readStatus(task.files.status);
      if (status !== undefined) void task.finish(status);
      else task.lose();
    } else void task.finish(readStatus(task.files.status) ?? code);
  });
  shim.unref();
  trace(`started ${resolved.command} pid ${pid} under shim ${shim.pid} (${line.isolation})`);
  return ready;
}

/**
 * The task of `stateDir`: held already, or adopted from what the dead supervisor left there.
 * @param {string} stateDir
 * @returns {Task | ExitRecord | undefined} an ExitRecord when the task is long finished, undefined when unknown or lost
 */
function taskFor(stateDir) {
  const held = tasks.get(stateDir);
  if (held) return held;
  const f = files(stateDir);
  const exit = /** @type {ExitRecord | undefined} */ (readJson(f.exit));
  if (exit) return exit;
  const spec = /** @type {ExecutorSpec | undefined} */ (readJson(f.spec));
  const state = /** @type {ExecutorState | undefined} */ (readJson(f.state));
  if (!spec || !state || spec.stateDir !== stateDir) return undefined;
  const status = readStatus(f.status);
  if (status === undefined && !sameProcess(state.executorPid, state.executorStartTime)) return undefined;
  const { startedAt, logs, ...rest } = state;
  const task = new Task(spec, { ok: true, ...rest, supervisorPid: process.pid, socketPath }, startedAt, { stdout: logs.stdout, stderr: logs.stderr });
  try {
    task.attachLogs();
  } catch (err) {
    log(`${spec.id}: log files not opened again:`, errnoText(err));
  }
  tasks.set(stateDir, task);
  adopted.add(task);
  trace(`adopted ${spec.id} (pid ${state.pid}, shim ${state.executorPid})`);
  adoptedPoll ??= setInterval(() => {
    for (const t of adopted) t.check();
  }, ADOPTED_POLL_MS);
  task.check();
  return task;
}

/**
 * @param {SupervisorRequest} req
 * @param {net.Socket} [requester] the connection it came on
 * @returns {Promise<ExecutorResponse>}
 */
async function handle(req, requester) {
  const id = req?.id;
  if (closing) return { id, ok: false, error: 'the supervisor is shutting down', code: 'ESHUTDOWN' };
  if (req?.op === 'ping') return { id, ok: true };
  if (req?.op === 'leave') {
    if (tasks.size || starting.size) return { id, ok: true };
    setImmediate(leave);
    return { id, ok: true, leaving: process.pid };
  }
  if (req?.op === 'start') {
    const spec = req.spec;
    if (!spec || typeof spec.stateDir !== 'string') return { id, ok: false, error: 'start: no spec', code: 'EBADREQ' };
    const held = tasks.get(spec.stateDir);
    if (starting.has(spec.stateDir) || (held && !held.finishing)) return { id, ok: false, error: `a task already runs in ${spec.stateDir}`, code: 'EEXIST' };
    /** @type {(v?: unknown) => void} */
    let settle = () => {};
    starting.set(spec.stateDir, new Promise((resolve) => (settle = resolve)));
    clearTimeout(idleTimer);
    try {
      if (held) await held.done(); // the previous run's clean-up first: it removes its FIFOs
      // A host that died right after asking gets no task: its successor finds none to adopt.
      await new Promise((resolve) => setImmediate(resolve));
      if (requester?.readableEnded || requester?.destroyed) {
        trace(`start of ${spec.id} dropped: its requester is gone`);
        return { id, ok: true, ready: { ok: false, error: 'the host asking for the start is gone', recoverable: true } };
      }
      return { id, ok: true, ready: await startTask(spec) };
    } catch (err) {
      const failure = err instanceof StartFailure ? err : new StartFailure(`supervisor failed: ${errnoText(err)}`, true);
      trace('start failed:', failure.message);
      return { id, ok: true, ready: { ok: false, error: failure.message, recoverable: failure.recoverable } };
    } finally {
      starting.delete(spec.stateDir);
      settle();
      idleCheck();
    }
  }
  const stateDir = /** @type {{ stateDir?: unknown }} */ (req)?.stateDir;
  if (typeof stateDir !== 'string') return { id, ok: false, error: `unknown request ${JSON.stringify(/** @type {any} */ (req)?.op)}`, code: 'EBADREQ' };
  await starting.get(stateDir);
  const found = taskFor(stateDir);
  if (!found) return { id, ok: false, error: `no task in ${stateDir} (its shim is gone without recording an exit)`, code: 'ELOST' };
  const task = found instanceof Task ? found : undefined;
  const exit = found instanceof Task ? found.exitRecord : found;
  /** @param {ExitRecord | undefined} r @returns {ExecutorResponse} */
  const answer = (r) => (r ? { id, ok: true, result: r } : { id, ok: false, error: 'the shim is gone without recording the exit', code: 'ELOST' });
  switch (req.op) {
    case 'status':
      return {
        id,
        ok: true,
        status: task
          ? {
              running: !task.exitRecord,
              pid: task.ready.pid,
              pgid: task.ready.pgid,
              executorPid: task.ready.executorPid,
              isolation: task.ready.isolation,
              ...(task.exitRecord ? { exit: task.exitRecord } : {}),
            }
          : { running: false, pid: 0, pgid: 0, executorPid: 0, isolation: 'none', ...(exit ? { exit } : {}) },
      };
    case 'wait':
      return answer(task ? await task.done() : exit);
    case 'signal': {
      if (!task || task.finishing) return { id, ok: false, error: 'Task not running', code: 'ENOTRUNNING' };
      let sig;
      try {
        sig = toSignal(req.signal);
      } catch (err) {
        return { id, ok: false, error: /** @type {Error} */ (err).message, code: 'ESIGNAL' };
      }
      if (!kill(task.taskPid(), sig)) return { id, ok: false, error: 'Task not running', code: 'ENOTRUNNING' };
      return { id, ok: true };
    }
    case 'stop': {
      if (!task) return answer(exit);
      let sig;
      try {
        sig = toSignal(req.signal || 'SIGINT');
      } catch (err) {
        return { id, ok: false, error: /** @type {Error} */ (err).message, code: 'ESIGNAL' };
      }
      task.stop(sig, Number(req.timeoutMs) || 0);
      return answer(await task.done());
    }
    default:
      return { id, ok: false, error: `unknown request ${JSON.stringify(/** @type {any} */ (req)?.op)}`, code: 'EBADREQ' };
  }
}

// ------------------------------------------------------------------------------------------------
// The socket, and leaving when idle.

/** @type {Set<net.Socket>} */
const conns = new Set();
let closing = false;
/** @type {NodeJS.Timeout | undefined} */
let idleTimer;

function idleCheck() {
  clearTimeout(idleTimer);
  if (closing || tasks.size || starting.size || conns.size) return;
  idleTimer = setTimeout(() => {
    if (!tasks.size && !starting.size && !conns.size) leave();
  }, IDLE_MS);
}

/** Stops serving and exits: idle, or sent away by a host that shuts down. */
function leave() {
  if (closing) return;
  closing = true;
  clearTimeout(idleTimer);
  // Unlinked first: a host that comes now finds no socket and starts a new supervisor.
  try {
    fs.rmSync(socketPath, { force: true });
    // Nothing went wrong: leave no trace (a dir that holds anything else stays).
    if (!problems) {
      fs.rmSync(path.join(dir, 'supervisor.log'), { force: true });
      fs.rmdirSync(dir);
    }
  } catch {}
  for (const sock of conns) sock.end();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
}

/** @param {net.Socket} sock */
function serve(sock) {
  conns.add(sock);
  clearTimeout(idleTimer);
  sock.on('close', () => {
    conns.delete(sock);
    idleCheck();
  });
  sock.on('error', () => {});
  let buf = '';
  sock.setEncoding('utf8');
  sock.on('data', (chunk) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const text = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!text.trim()) continue;
      /** @type {SupervisorRequest} */
      let req;
      try {
        req = JSON.parse(text);
      } catch {
        sock.write(JSON.stringify({ ok: false, error: 'bad request', code: 'EBADREQ' }) + '\n');
        continue;
      }
      handle(req, sock).then(
        (res) => {
          if (!sock.destroyed) sock.write(JSON.stringify(res) + '\n');
        },
        (err) => log('request failed:', err?.stack ?? err),
      );
    }
    if (buf.length > 16 << 20) sock.destroy();
  });
}

/** Whether a supervisor already answers on `socketPath`. */
function answers() {
  return new Promise((resolve) => {
    const s = net.createConnection(socketPath);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
const server = net.createServer(serve);
for (let attempt = 0; ; attempt++) {
  const err = await new Promise((resolve) => {
    server.once('error', resolve);
    // A deep accept queue: a client starting a thousand allocs at once connects faster than
    // the supervisor accepts (Node's default of 511 made the rest fail with EAGAIN). The
    // kernel caps it at net.core.somaxconn.
    server.listen({ path: socketPath, backlog: 4096 }, () => {
      server.off('error', resolve);
      resolve(undefined);
    });
  });
  if (!err) break;
  const code = /** @type {NodeJS.ErrnoException} */ (err).code;
  if (code === 'EADDRINUSE' && attempt < 3) {
    if (await answers()) {
      sendReady({ ok: false, code: 'EEXIST', error: `a supervisor already serves ${socketPath}` });
      process.exit(0);
    }
    fs.rmSync(socketPath, { force: true }); // a dead supervisor's
    continue;
  }
  sendReady({ ok: false, code: code ?? 'EIO', error: `the supervisor could not listen on ${socketPath}: ${errnoText(err)}` });
  process.exit(1);
}
try {
  fs.chmodSync(socketPath, 0o600);
} catch {}
server.on('error', (err) => log('server error:', err.message));
sendReady({ ok: true });
trace(`listening on ${socketPath}`);
idleCheck();
