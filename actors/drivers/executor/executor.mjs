// @ts-check
/**
 * berth's per-task executor: `node executor.mjs <specPath>`.
 *
 * Started detached by the raw_exec / exec drivers, one per task. It spawns the task in its own
 * process group, writes the task's stdout/stderr to rotated files, records `state.json` and
 * `exit.json` in the state dir, and answers JSON-lines requests (status, wait, signal, stop) on a
 * unix socket. It outlives the host process; when the task exits it kills whatever is left in
 * the task's process group, flushes the logs, answers its waiters and exits.
 *
 * Startup handshake: fd 3 is a pipe to the driver; exactly one ReadyLine is written to it, then
 * it is closed, so the host holds nothing of ours once `start` resolves. Plain JavaScript so that
 * it starts in ~40 ms (no TypeScript loader). Types: ./protocol.ts.
 *
 * @typedef {import('./protocol.ts').ExecutorSpec} ExecutorSpec
 * @typedef {import('./protocol.ts').ExecutorRequest} ExecutorRequest
 * @typedef {import('./protocol.ts').ExecutorResponse} ExecutorResponse
 * @typedef {import('./protocol.ts').ExitRecord} ExitRecord
 * @typedef {import('./protocol.ts').ReadyLine} ReadyLine
 * @typedef {import('./protocol.ts').ReadyOk} ReadyOk
 * @typedef {import('./protocol.ts').ExecutorState} ExecutorState
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { constants } from 'node:os';
import { spawn } from 'node:child_process';
import { FileRotator, rotatingStream } from '../logs/rotator.mjs';
import { CgroupJoinError, killCgroup, oomKillCount, removeCgroup, spawnInCgroup } from '../../cgroups/procs.mjs';

const READY_FD = 3;
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** How long to wait for the task's pipes to drain after its group was killed. */
const DRAIN_TIMEOUT_MS = 2000;
/** Hard cap between answering waiters and exiting. */
const LINGER_MS = 1000;

/** @type {Record<string, string>} Go's (lower-case strerror) wording for spawn errors. */
const ERRNO_TEXT = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOEXEC: 'exec format error',
  ENOTDIR: 'not a directory',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
  E2BIG: 'argument list too long',
  ETXTBSY: 'text file busy',
  EISDIR: 'is a directory',
  ENOMEM: 'cannot allocate memory',
  EAGAIN: 'resource temporarily unavailable',
};

/** @param {unknown} err */
function errnoText(err) {
  const code = /** @type {NodeJS.ErrnoException} */ (err)?.code;
  return (code && ERRNO_TEXT[code]) || (err instanceof Error ? err.message : String(err));
}

/** @param {...unknown} parts */
function log(...parts) {
  try {
    fs.writeSync(2, `${new Date().toISOString()} executor[${process.pid}] ${parts.join(' ')}\n`);
  } catch {}
}

/**
 * Writes JSON atomically: temp file + rename.
 * @param {string} file
 * @param {unknown} value
 */
function writeJsonAtomic(file, value) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/**
 * Field 22 of /proc/<pid>/stat: start time in clock ticks since boot.
 * @param {number} pid
 * @returns {number | undefined}
 */
function procStartTime(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[19]); // field 3 is fields[0]
  } catch {
    return undefined;
  }
}

/**
 * The children of `pid` (for exec: the namespace init that `unshare --fork` created).
 * @param {number} pid
 * @returns {number[]}
 */
function childrenOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {}
  /** @type {number[]} */
  const out = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {}
  }
  return out;
}

/**
 * @param {fs.Stats} st
 * @param {number} uid
 * @param {number} gid
 */
function canExec(st, uid, gid) {
  if (!st.isFile()) return false;
  if (uid === 0) return (st.mode & 0o111) !== 0;
  if (st.uid === uid) return (st.mode & 0o100) !== 0;
  if (st.gid === gid) return (st.mode & 0o010) !== 0;
  return (st.mode & 0o001) !== 0;
}

/**
 * Resolves `p` (absolute, as seen inside `root`) to a host path, following symlinks inside the
 * root (an absolute link target is relative to the root). Throws ENOENT/ELOOP like the kernel.
 * @param {string} root
 * @param {string} p
 * @returns {string}
 */
function resolveInRoot(root, p) {
  let parts = p.split('/').filter((s) => s && s !== '.');
  /** @type {string[]} */
  let done = [];
  let hops = 0;
  while (parts.length) {
    const part = /** @type {string} */ (parts.shift());
    if (part === '..') {
      done.pop();
      continue;
    }
    const host = path.join(root, ...done, part);
    const st = fs.lstatSync(host);
    if (st.isSymbolicLink()) {
      if (++hops > 40) throw Object.assign(new Error('ELOOP'), { code: 'ELOOP' });
      const target = fs.readlinkSync(host);
      if (target.startsWith('/')) done = [];
      parts = [...target.split('/').filter((s) => s && s !== '.'), ...parts];
      continue;
    }
    done.push(part);
  }
  return path.join(root, ...done);
}

/**
 * Finds the executable the task runs, as Nomad does: a path with a slash is used as given
 * (relative to the task dir); a bare name is looked for in the task dir's local/, the task dir,
 * then each PATH entry. For chroot mode every path is inside the chroot.
 * @param {ExecutorSpec} spec
 * @returns {{ ok: true, hostPath: string, command: string } | { ok: false, error: string }}
 */
function resolveCommand(spec) {
  const cmd = spec.command;
  const chroot = spec.mode === 'chroot' ? spec.chroot : undefined;
  const uid = chroot ? chroot.uid : (process.getuid?.() ?? 0);
  const gid = chroot ? chroot.gid : (process.getgid?.() ?? 0);
  /** @param {string} p  path as the task sees it @returns {string} host path */
  const toHost = (p) => (chroot ? resolveInRoot(spec.taskDir, p) : p);
  const base = chroot ? '/' : spec.taskDir;
  if (cmd.includes('/')) {
    const p = path.resolve(base, cmd);
    try {
      const host = toHost(p);
      const st = fs.statSync(host);
      if (!canExec(st, uid, gid)) return { ok: false, error: `fork/exec ${p}: permission denied` };
      return { ok: true, hostPath: host, command: p };
    } catch (err) {
      return { ok: false, error: `fork/exec ${p}: ${errnoText(err)}` };
    }
  }
  const envPath = spec.env.PATH ?? (chroot ? DEFAULT_PATH : spec.lookupPath || DEFAULT_PATH);
  const candidates = [path.join(base, 'local', cmd), path.join(base, cmd)];
  for (const dir of envPath.split(':')) candidates.push(path.resolve(base, dir || '.', cmd));
  for (const p of candidates) {
    try {
      const host = toHost(p);
      if (canExec(fs.statSync(host), uid, gid)) return { ok: true, hostPath: host, command: p };
    } catch {}
  }
  return { ok: false, error: `exec: ${JSON.stringify(cmd)}: executable file not found in $PATH` };
}

/** @param {string | number} sig @returns {NodeJS.Signals} */
function toSignal(sig) {
  const sigs = /** @type {Record<string, number>} */ (constants.signals);
  if (typeof sig === 'number' || /^\d+$/.test(String(sig))) {
    const num = Number(sig);
    const name = Object.keys(sigs).find((k) => sigs[k] === num);
    if (!name) throw new Error(`unknown signal ${sig}`);
    return /** @type {NodeJS.Signals} */ (name);
  }
  const up = String(sig).toUpperCase();
  const name = up.startsWith('SIG') ? up : `SIG${up}`;
  if (!(name in sigs)) throw new Error(`unknown signal ${JSON.stringify(sig)}`);
  return /** @type {NodeJS.Signals} */ (name);
}

/**
 * Sends a signal to a process or, with a negative pid, a process group; false when none is left.
 * @param {number} pid
 * @param {NodeJS.Signals | number} sig
 */
function kill(pid, sig) {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------------------------------------

/** @type {ExecutorSpec} */
const spec = JSON.parse(fs.readFileSync(process.argv[2] ?? '', 'utf8'));
let readySent = false;

/** @param {ReadyLine} line */
function sendReady(line) {
  if (readySent) return;
  readySent = true;
  try {
    fs.writeSync(READY_FD, JSON.stringify(line) + '\n');
  } catch (err) {
    log('ready line not delivered:', errnoText(err));
  }
  try {
    fs.closeSync(READY_FD);
  } catch {}
}

/**
 * @param {string} error
 * @param {boolean} recoverable
 * @returns {never}
 */
function failStart(error, recoverable) {
  log('start failed:', error);
  sendReady({ ok: false, error, recoverable });
  process.exit(1);
}

process.on('uncaughtException', (err) => {
  log('uncaught:', err?.stack ?? err);
  if (!readySent) failStart(`executor failed: ${err?.message ?? err}`, true);
});
process.on('SIGHUP', () => {});

const resolved = resolveCommand(spec);
if (!resolved.ok) failStart(resolved.error, false);
const command = /** @type {{ hostPath: string, command: string }} */ (resolved);

// Log files.
/** @type {{ stdout: number, stderr: number }} */
const logIndex = { stdout: 0, stderr: 0 };
/** @param {'stdout' | 'stderr'} stream */
function makeRotator(stream) {
  const r = new FileRotator({
    dir: spec.logs.dir,
    baseName: `${spec.taskName}.${stream}`,
    maxFiles: spec.logs.maxFiles,
    fileSize: spec.logs.maxFileSizeBytes,
    onRotate: (i) => {
      logIndex[stream] = i;
      scheduleStateWrite();
    },
  });
  r.open();
  logIndex[stream] = r.index;
  return r;
}
/** @type {FileRotator} */ let outRot;
/** @type {FileRotator} */ let errRot;
try {
  outRot = makeRotator('stdout');
  errRot = makeRotator('stderr');
} catch (err) {
  failStart(`failed to open log files in ${spec.logs.dir}: ${errnoText(err)}`, true);
}

// The command line.
/** @type {'none' | 'chroot' | 'chroot+pid+mount'} */
let isolation = 'none';
/** @type {string} */ let file;
/** @type {string[]} */ let argv;
/** @type {string | undefined} */ let argv0;
if (spec.mode === 'chroot') {
  const c = /** @type {NonNullable<ExecutorSpec['chroot']>} */ (spec.chroot);
  const root = spec.taskDir;
  const userspec = `--userspec=${c.uid}:${c.gid}`;
  if (c.namespaces && c.unshare && c.mount && c.shell) {
    isolation = 'chroot+pid+mount';
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
    file = c.unshare;
    argv = [
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
      command.command,
      ...spec.args,
    ];
  } else {
    isolation = 'chroot';
    file = c.chroot;
    argv = [userspec, root, command.command, ...spec.args];
  }
} else {
  file = command.hostPath;
  argv = spec.args;
  argv0 = spec.command;
}

// ------------------------------------------------------------------------------------------------
// State shared by the request handlers.

/** @type {import('node:child_process').ChildProcess} */
let child;
/** @type {ReadyOk} */
let ready;
/** @type {ExitRecord | undefined} */
let exitRecord;
/** @type {Array<(r: ExitRecord) => void>} */
const onDone = [];
/** @type {NodeJS.Timeout | undefined} */
let killTimer;
let killDeadline = Infinity;
/** @type {Set<net.Socket>} */
const conns = new Set();
let stateWritePending = false;

function scheduleStateWrite() {
  if (!ready || stateWritePending) return;
  stateWritePending = true;
  setImmediate(() => {
    stateWritePending = false;
    writeState();
  });
}

function writeState() {
  const { ok: _ok, ...rest } = ready;
  /** @type {ExecutorState} */
  const state = { ...rest, startedAt, logs: { dir: spec.logs.dir, ...logIndex } };
  try {
    writeJsonAtomic(path.join(spec.stateDir, 'state.json'), state);
  } catch (err) {
    log('state.json not written:', errnoText(err));
  }
}

/** @returns {Promise<ExitRecord>} */
function done() {
  return exitRecord ? Promise.resolve(exitRecord) : new Promise((resolve) => onDone.push(resolve));
}

/** The process signals are sent to: the task (for exec with namespaces, unshare's child). */
function taskPid() {
  if (isolation !== 'chroot+pid+mount') return ready.pid;
  return childrenOf(ready.pid)[0] ?? ready.pid;
}

/**
 * Sends `sig` to the task's whole process group; SIGKILL follows after `timeoutMs`.
 * @param {NodeJS.Signals} sig
 * @param {number} timeoutMs
 */
function stopTask(sig, timeoutMs) {
  if (exitRecord) return;
  const deadline = Date.now() + Math.max(0, timeoutMs);
  if (sig === 'SIGKILL' || timeoutMs <= 0) {
    kill(-ready.pgid, 'SIGKILL');
    return;
  }
  kill(-ready.pgid, sig);
  if (deadline < killDeadline) {
    killDeadline = deadline;
    clearTimeout(killTimer);
    killTimer = setTimeout(() => kill(-ready.pgid, 'SIGKILL'), timeoutMs);
  }
}

/**
 * @param {ExecutorRequest} req
 * @returns {Promise<ExecutorResponse>}
 */
async function handle(req) {
  const id = req.id;
  switch (req?.op) {
    case 'status':
      return {
        id,
        ok: true,
        status: {
          running: !exitRecord,
          pid: ready.pid,
          pgid: ready.pgid,
          executorPid: process.pid,
          isolation,
          exit: exitRecord,
        },
      };
    case 'wait':
      return { id, ok: true, result: await done() };
    case 'signal': {
      if (exitRecord) return { id, ok: false, error: 'Task not running', code: 'ENOTRUNNING' };
      let sig;
      try {
        sig = toSignal(req.signal);
      } catch (err) {
        return { id, ok: false, error: /** @type {Error} */ (err).message, code: 'ESIGNAL' };
      }
      if (!kill(taskPid(), sig)) return { id, ok: false, error: 'Task not running', code: 'ENOTRUNNING' };
      return { id, ok: true };
    }
    case 'stop': {
      let sig;
      try {
        sig = toSignal(req.signal || 'SIGINT');
      } catch (err) {
        return { id, ok: false, error: /** @type {Error} */ (err).message, code: 'ESIGNAL' };
      }
      stopTask(sig, Number(req.timeoutMs) || 0);
      return { id, ok: true, result: await done() };
    }
    default:
      return { id, ok: false, error: `unknown request ${JSON.stringify(/** @type {any} */ (req)?.op)}`, code: 'EBADREQ' };
  }
}

/** @param {net.Socket} sock */
function serve(sock) {
  conns.add(sock);
  sock.on('close', () => conns.delete(sock));
  sock.on('error', () => {});
  let buf = '';
  sock.setEncoding('utf8');
  sock.on('data', (chunk) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      /** @type {ExecutorRequest} */
      let req;
      try {
        req = JSON.parse(line);
      } catch {
        sock.write(JSON.stringify({ ok: false, error: 'bad request', code: 'EBADREQ' }) + '\n');
        continue;
      }
      handle(req).then(
        (res) => {
          if (!sock.destroyed) sock.write(JSON.stringify(res) + '\n');
        },
        (err) => log('request failed:', err?.stack ?? err),
      );
    }
    if (buf.length > 1 << 20) sock.destroy();
  });
}

// ------------------------------------------------------------------------------------------------
// Start: socket first (so the ready line means "you can talk to me"), then the task.

try {
  fs.rmSync(spec.socketPath, { force: true });
} catch {}
const server = net.createServer(serve);
server.on('error', (err) => {
  if (!readySent) failStart(`executor could not listen on ${spec.socketPath}: ${errnoText(err)}`, true);
  log('server error:', err.message);
});
await new Promise((resolve) => server.listen(spec.socketPath, () => resolve(undefined)));
try {
  fs.chmodSync(spec.socketPath, 0o600);
} catch {}

const startedAt = Date.now();
try {
  const start = () =>
    spawn(file, argv, {
      argv0,
      cwd: spec.mode === 'chroot' ? '/' : spec.taskDir,
      env: spec.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  // With a cgroup, the child is born inside it: no instruction of the task runs outside.
  child = spec.cgroup ? spawnInCgroup(spec.cgroup, start) : start();
} catch (err) {
  if (err instanceof CgroupJoinError) failStart(err.message, true);
  failStart(`fork/exec ${command.command}: ${errnoText(err)}`, false);
}
await new Promise((resolve) => {
  child.once('spawn', () => resolve(undefined));
  child.once('error', (err) => {
    // Only reached before 'spawn': an exec failure (ENOENT, EACCES, ENOEXEC...).
    if (!readySent) failStart(`fork/exec ${command.command}: ${errnoText(err)}`, false);
    else log('child error:', err.message);
  });
});

const pid = /** @type {number} */ (child.pid);
ready = {
  ok: true,
  executorPid: process.pid,
  executorStartTime: procStartTime(process.pid) ?? 0,
  pid,
  pgid: pid,
  startTime: procStartTime(pid) ?? 0,
  isolation,
  command: command.command,
  socketPath: spec.socketPath,
};
writeState();

// Logs: the pipes pause while a file write is pending (backpressure), so memory stays bounded.
const outStream = rotatingStream(outRot);
const errStream = rotatingStream(errRot);
/** @param {import('node:stream').Readable} from @param {import('node:stream').Writable} to */
const drained = (from, to) =>
  new Promise((resolve) => {
    to.on('error', (err) => {
      log('log write failed:', err.message);
      from.resume(); // keep reading (and dropping) so the task never blocks on a dead log
      resolve(undefined);
    });
    to.on('finish', () => resolve(undefined));
    to.on('close', () => resolve(undefined));
    from.pipe(to);
  });
const outDone = drained(/** @type {import('node:stream').Readable} */ (child.stdout), outStream);
const errDone = drained(/** @type {import('node:stream').Readable} */ (child.stderr), errStream);

child.on('exit', (code, signal) => {
  void onExit(code, signal);
});
process.on('SIGTERM', () => stopTask(toSignal(spec.killSignal || 'SIGINT'), spec.killTimeoutMs));
process.on('SIGINT', () => stopTask(toSignal(spec.killSignal || 'SIGINT'), spec.killTimeoutMs));

sendReady(ready);
log(`started ${command.command} pid ${pid} (${isolation})`);

/**
 * @param {number | null} code
 * @param {NodeJS.Signals | null} signal
 */
async function onExit(code, signal) {
  clearTimeout(killTimer);
  // No grandchild survives the task: not in its process group, nor (setsid, double fork) in its cgroup.
  kill(-ready.pgid, 'SIGKILL');
  if (spec.cgroup && !(await killCgroup(spec.cgroup))) log('processes left in the task cgroup after SIGKILL');
  const num = signal ? (/** @type {Record<string, number>} */ (constants.signals)[signal] ?? 0) : 0;
  // Exit code as Nomad reports it: 128 + signal when killed by a signal.
  /** @type {ExitRecord} */
  const record = { exitCode: num ? 128 + num : (code ?? 0), signal: num, finishedAt: 0 };
  if (spec.cgroup && (oomKillCount(spec.cgroup) ?? 0) > 0) {
    record.oomKilled = true;
    record.err = 'OOM Killed';
  }
  // Removed here too, so no empty cgroup outlives a host that never comes back (the host's
  // destroy removes it again, harmlessly).
  if (spec.cgroup && !(await removeCgroup(spec.cgroup))) log('the task cgroup could not be removed');
  const timer = setTimeout(() => {
    log('task pipes still open after its group was killed; closing them');
    child.stdout?.destroy();
    child.stderr?.destroy();
    outStream.end();
    errStream.end();
  }, DRAIN_TIMEOUT_MS);
  await Promise.all([outDone, errDone]);
  clearTimeout(timer);
  record.finishedAt = Date.now();
  try {
    writeJsonAtomic(path.join(spec.stateDir, 'exit.json'), record);
  } catch (err) {
    log('exit.json not written:', errnoText(err));
  }
  exitRecord = record;
  log(`task exited: code ${record.exitCode} signal ${record.signal}`);
  for (const resolve of onDone.splice(0)) resolve(record);
  // Let the answers go out, then leave.
  setImmediate(() => {
    server.close();
    try {
      fs.rmSync(spec.socketPath, { force: true });
    } catch {}
    for (const sock of conns) sock.end();
    const exit = () => process.exit(0);
    if (conns.size === 0) setImmediate(exit);
    else {
      setTimeout(exit, LINGER_MS).unref();
      const check = () => {
        if (conns.size === 0) exit();
      };
      for (const sock of conns) sock.on('close', check);
    }
  });
}
