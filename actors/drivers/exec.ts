/**
 * The `exec` driver: like raw_exec, but isolated. The task runs chrooted into its task dir
 * (which berth builds as a chroot before `start`, from `chroot_env`), with `/` as working
 * directory, as `task.user` (default `nobody`), and, where the kernel allows, in its own PID and
 * mount namespaces with a private `/proc` and a minimal `/dev`:
 *
 * ```
 *  shim ─► setsid sh ─exec─► unshare --pid --mount --fork --kill-child --mount-proc=<taskdir>/proc
 *                              └─ sh (mount /dev) ─exec─► chroot --userspec=uid:gid <taskdir> <command> <args>
 * ```
 * The handle's `state.isolation` says what was achieved: `'chroot+pid+mount'`, or `'chroot'`
 * when namespaces are not available. With namespaces the task is PID 1 of its namespace: as in
 * Nomad's exec driver, signals it installs no handler for are ignored, so a stop escalates to
 * SIGKILL after the kill timeout. Requires root.
 * @module
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DriverStartError, TaskNotRunningError } from '../../model/errors.ts';
import type { Driver, TaskConfig, TaskHandle } from './driver.ts';
import { ExecError } from './exec-process.ts';
import { createProcessDriver, type ProcessDriverOptions } from './executor/process-driver.ts';
import type { ExecutorSpec } from './executor/protocol.ts';

/** Options of {@link createExecDriver}. */
export interface ExecDriverOptions extends ProcessDriverOptions {
  /** Whether berth runs as root. Default `process.getuid() === 0` (tests can pretend otherwise). */
  isRoot?: () => boolean;
  /** PID + mount namespaces: 'auto' (use when available, default), 'never', or 'required'. */
  namespaces?: 'auto' | 'never' | 'required';
  /** Helper programs; default: looked up in the usual system directories. */
  unsharePath?: string;
  chrootPath?: string;
  mountPath?: string;
  shellPath?: string;
  /** `nsenter` (util-linux), for exec into a running task; default: looked up. */
  nsenterPath?: string;
  /** Where users are looked up. Default `/etc/passwd` (of the host, as Nomad does). */
  passwdFile?: string;
  /** User when neither TaskConfig.user nor task.user is set. Default 'nobody'. */
  defaultUser?: string;
}

/** PATH of an exec inside the chroot when the task's env sets none. */
const DEFAULT_TASK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The children of `pid` (the kernel's list; empty when it cannot say). */
function childPids(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * The pid to enter: the task once it is inside its chroot. With namespaces that is the child
 * `unshare --fork` made (PID 1 of its namespace); right after a start it may not have forked or
 * chrooted yet, so this waits for it (up to 5 s), never entering a process still on the host's root.
 */
async function chrootedTask(pid: number, namespaced: boolean): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const target = namespaced ? childPids(pid)[0] : pid;
    if (target !== undefined) {
      try {
        if (fs.readlinkSync(`/proc/${target}/root`) !== '/') return target;
      } catch {
        throw new TaskNotRunningError();
      }
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new ExecError(`exec driver: the task (pid ${pid}) did not enter its chroot in time`);
}

const SYSTEM_DIRS = ['/usr/sbin', '/usr/bin', '/sbin', '/bin', '/usr/local/sbin', '/usr/local/bin'];

function findTool(name: string, given?: string): string | undefined {
  const dirs = [...SYSTEM_DIRS, ...(process.env.PATH ?? '').split(':').filter(Boolean)];
  for (const p of given ? [given] : dirs.map((d) => path.join(d, name))) {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {}
  }
  return undefined;
}

/** Looks a user up as `name`, `uid` or `uid:gid`; returns uid and primary gid. */
export function lookupUser(user: string, passwdFile = '/etc/passwd'): { uid: number; gid: number } {
  const numeric = /^(\d+)(?::(\d+))?$/.exec(user);
  let lines: string[] = [];
  try {
    lines = fs.readFileSync(passwdFile, 'utf8').split('\n');
  } catch {}
  for (const line of lines) {
    const [name, , uid, gid] = line.split(':');
    if (name === undefined || uid === undefined || gid === undefined) continue;
    if (name === user || (numeric && uid === numeric[1])) {
      return { uid: Number(uid), gid: numeric?.[2] !== undefined ? Number(numeric[2]) : Number(gid) };
    }
  }
  if (numeric) return { uid: Number(numeric[1]), gid: Number(numeric[2] ?? numeric[1]) };
  throw new DriverStartError(`failed to identify user "${user}": user: unknown user ${user}`, false);
}

/** Creates the `exec` driver. */
export function createExecDriver(opts: ExecDriverOptions = {}): Driver {
  const isRoot = opts.isRoot ?? (() => process.getuid?.() === 0);
  const mode = opts.namespaces ?? 'auto';
  let probe: Promise<boolean> | undefined;

  /** Can we create PID + mount namespaces here? Asked once per driver. */
  function namespacesWork(unshare: string, shell: string): Promise<boolean> {
    probe ??= new Promise((resolve) => {
      const p = spawn(unshare, ['--pid', '--mount', '--fork', '--kill-child', shell, '-c', ':'], { stdio: 'ignore' });
      p.on('error', () => resolve(false));
      p.on('exit', (code) => resolve(code === 0));
    });
    return probe;
  }

  async function prepare(config: TaskConfig): Promise<Pick<ExecutorSpec, 'mode' | 'chroot'>> {
    if (!isRoot()) {
      throw new DriverStartError(
        `exec driver requires root: berth runs as uid ${process.getuid?.()}, and the exec driver must chroot and switch users (use raw_exec, or run berth as root)`,
        false,
      );
    }
    const chroot = findTool('chroot', opts.chrootPath);
    if (!chroot) throw new DriverStartError('exec driver needs the "chroot" program (coreutils), which was not found', false);
    const root = config.taskDir.dir;
    if (!fs.existsSync(root)) throw new DriverStartError(`task dir ${root} does not exist: it must be built as a chroot before start`, true);
    const { uid, gid } = lookupUser(config.user ?? config.task.user ?? opts.defaultUser ?? 'nobody', opts.passwdFile);
    let namespaces = false;
    const unshare = findTool('unshare', opts.unsharePath);
    const mount = findTool('mount', opts.mountPath);
    const shell = findTool('sh', opts.shellPath);
    if (mode !== 'never') {
      namespaces = !!(unshare && mount && shell) && (await namespacesWork(unshare, shell));
      if (!namespaces && mode === 'required') {
        throw new DriverStartError(
          'exec driver: PID and mount namespaces are required but not available (needs util-linux "unshare", "mount", and a kernel that allows them)',
          false,
        );
      }
    }
    return { mode: 'chroot', chroot: { uid, gid, namespaces, unshare, chroot, mount, shell } };
  }

  /**
   * An exec joins the task where it runs: `nsenter` into its PID and mount namespaces (when it
   * has them), its root (the chroot) and working dir, as its user; the cgroup is joined first.
   */
  async function execTarget(handle: TaskHandle, argv: string[]) {
    const nsenter = findTool('nsenter', opts.nsenterPath);
    if (!nsenter) throw new ExecError('exec driver: exec into a task needs the "nsenter" program (util-linux), which was not found');
    const config = handle.config;
    const { uid, gid } = lookupUser(config.user ?? config.task.user ?? opts.defaultUser ?? 'nobody', opts.passwdFile);
    const pid = Number(handle.state.pid);
    const namespaced = handle.state.isolation === 'chroot+pid+mount';
    const target = await chrootedTask(pid, namespaced);
    const args = [
      '-t',
      String(target),
      ...(namespaced ? ['-p', '-m'] : []),
      '-r',
      '-w',
      '-G',
      String(gid),
      '-S',
      String(uid),
      '--',
      argv[0]!,
      ...argv.slice(1),
    ];
    return { file: nsenter, args, cwd: '/', env: { PATH: DEFAULT_TASK_PATH, ...config.env } };
  }

  return createProcessDriver(
    {
      name: 'exec',
      capabilities: { fsIsolation: 'chroot', sendSignals: true, exec: true },
      applyLimits: true,
      prepare,
      execTarget,
    },
    opts,
  );
}
