// @ts-check
/**
 * What the supervisor (./supervisor.mjs) needs to turn a spec into a command line: the command's
 * lookup as Nomad does it (task dir local/, task dir, PATH; inside the chroot for exec), Go's
 * wording for spawn errors, signals by name or number, and small /proc readings.
 *
 * @typedef {import('./protocol.ts').ExecutorSpec} ExecutorSpec
 */
import fs from 'node:fs';
import path from 'node:path';
import { constants } from 'node:os';

/** PATH a command is looked up in when the task's environment sets none. */
export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** @type {Record<string, string>} Go's (lower-case strerror) wording for spawn errors. */
export const ERRNO_TEXT = {
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
export function errnoText(err) {
  const code = /** @type {NodeJS.ErrnoException} */ (err)?.code;
  return (code && ERRNO_TEXT[code]) || (err instanceof Error ? err.message : String(err));
}

/**
 * Writes JSON atomically: temp file + rename.
 * @param {string} file
 * @param {unknown} value
 */
export function writeJsonAtomic(file, value) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/**
 * Field 22 of /proc/<pid>/stat: start time in clock ticks since boot.
 * @param {number} pid
 * @returns {number | undefined}
 */
export function procStartTime(pid) {
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
export function childrenOf(pid) {
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
export function canExec(st, uid, gid) {
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
export function resolveInRoot(root, p) {
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
 * Whether the kernel would refuse to exec `hostPath` (ENOEXEC): neither an ELF binary nor a `#!`
 * script. The task is exec'd by a shell, which would run such a file as a shell script instead;
 * Nomad reports "exec format error", so berth checks first. An unreadable file is left to the kernel.
 * @param {string} hostPath
 */
export function notExecutableFormat(hostPath) {
  let fd;
  try {
    fd = fs.openSync(hostPath, 'r');
    const head = Buffer.alloc(4);
    const n = fs.readSync(fd, head, 0, 4, 0);
    if (n >= 2 && head[0] === 0x23 && head[1] === 0x21) return false; // #!
    return !(n === 4 && head.readUInt32BE(0) === 0x7f454c46); // \x7fELF
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Finds the executable the task runs, as Nomad does: a path with a slash is used as given
 * (relative to the task dir); a bare name is looked for in the task dir's local/, the task dir,
 * then each PATH entry. For chroot mode every path is inside the chroot.
 * @param {ExecutorSpec} spec
 * @returns {{ ok: true, hostPath: string, command: string } | { ok: false, error: string }}
 */
export function resolveCommand(spec) {
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
      if (notExecutableFormat(host)) return { ok: false, error: `fork/exec ${p}: exec format error` };
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
      if (!canExec(fs.statSync(host), uid, gid)) continue;
      if (notExecutableFormat(host)) return { ok: false, error: `fork/exec ${p}: exec format error` };
      return { ok: true, hostPath: host, command: p };
    } catch {}
  }
  return { ok: false, error: `exec: ${JSON.stringify(cmd)}: executable file not found in $PATH` };
}

/** @param {string | number} sig @returns {NodeJS.Signals} */
export function toSignal(sig) {
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
export function kill(pid, sig) {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}
