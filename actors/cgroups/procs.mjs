// @ts-check
/**
 * The cgroup operations the supervisor and the host share (plain JavaScript, so the supervisor can
 * import it without a TypeScript loader): join a task's cgroup around a spawn, list its
 * processes, count its OOM kills, kill everything in it, and remove it.
 *
 * Killing is escape-proof: v2 writes `cgroup.kill`; v1 freezes the cgroup (no fork can race
 * the kill), sends SIGKILL to every member, then thaws it so the kills land.
 *
 * @typedef {import('./types.ts').TaskCgroup} TaskCgroup
 */
import fs from 'node:fs';
import path from 'node:path';

/** @param {number} ms */
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The dirs to write a pid into: one per hierarchy (v1 cpu and cpuacct may share a mount).
 * @param {TaskCgroup} cg
 * @returns {string[]}
 */
export function cgroupDirs(cg) {
  return [...new Set(Object.values(cg.paths))];
}

/**
 * The dir whose cgroup.procs lists the task's processes.
 * @param {TaskCgroup} cg
 */
function listDir(cg) {
  const p = cg.paths;
  return p.unified ?? p.freezer ?? p.pids ?? p.memory ?? p.cpuacct ?? Object.values(p)[0] ?? '';
}

/**
 * The pids in the task's cgroup (empty when it is gone).
 * @param {TaskCgroup} cg
 * @returns {number[]}
 */
export function cgroupPids(cg) {
  try {
    return fs
      .readFileSync(path.join(listDir(cg), 'cgroup.procs'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * A process's cgroup path per hierarchy (controller name, or `unified` for v2) from the text of
 * /proc/<pid>/cgroup.
 * @param {string} text
 * @returns {Record<string, string>}
 */
export function parseSelfCgroup(text) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const line of text.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === '0' && m[2] === '') out.unified = /** @type {string} */ (m[3]);
    else for (const c of /** @type {string} */ (m[2]).split(',')) out[c] = /** @type {string} */ (m[3]);
  }
  return out;
}

/**
 * This process's own cgroup dir in each of the task's hierarchies (from /proc/self/cgroup).
 * @param {TaskCgroup} cg
 * @returns {Record<string, string>}
 */
export function ownCgroupDirs(cg) {
  const rel = parseSelfCgroup(fs.readFileSync('/proc/self/cgroup', 'utf8'));
  /** @type {Record<string, string>} */
  const out = {};
  for (const key of Object.keys(cg.paths)) {
    const mount = cg.mounts[key];
    const r = rel[key];
    if (mount !== undefined && r !== undefined) out[key] = path.join(mount, r);
  }
  return out;
}

/** The calling process could not be moved into (or back out of) a cgroup. */
export class CgroupJoinError extends Error {}

/**
 * Moves the calling process into every dir of `dirs` (`key → cgroup dir`): the whole process
 * through `cgroup.procs`, or (v1, `file` = `tasks`) only its main thread. Throws
 * {@link CgroupJoinError} on failure.
 * @param {Record<string, string>} dirs
 * @param {'cgroup.procs' | 'tasks'} [file]
 */
export function enterCgroups(dirs, file = 'cgroup.procs') {
  const pid = String(process.pid);
  for (const dir of new Set(Object.values(dirs))) {
    try {
      fs.writeFileSync(path.join(dir, file), pid);
    } catch (err) {
      throw new CgroupJoinError(`cannot join cgroup ${dir}: ${/** @type {NodeJS.ErrnoException} */ (err).code ?? err}`);
    }
  }
}

/**
 * Runs `spawn` with the calling process inside the task's cgroup, so the child is born there and
 * its first instruction already runs under the limits; then moves the caller back out. Node's
 * spawn returns only after the child's exec, so nothing of the caller runs in there for long.
 * On v1 only the caller's main thread (the one that forks) goes in.
 * @template T
 * @param {TaskCgroup} cg
 * @param {() => T} spawn
 * @returns {T}
 */
export function spawnInCgroup(cg, spawn) {
  const home = ownCgroupDirs(cg);
  const file = cg.version === 'v1' ? 'tasks' : 'cgroup.procs';
  // The pids controller counts threads: while the caller's are inside, raise the task's limit by
  // exactly their number, so the task itself can still have `pidsMax` processes, never more.
  const pidsDir = cg.limits.pidsMax !== undefined ? (cg.version === 'v2' ? cg.paths.unified : cg.paths.pids) : undefined;
  const threads = file === 'tasks' ? 1 : fs.readdirSync('/proc/self/task').length;
  if (pidsDir) fs.writeFileSync(path.join(pidsDir, 'pids.max'), String(Number(cg.limits.pidsMax) + threads));
  enterCgroups(cg.paths, file);
  try {
    return spawn();
  } finally {
    enterCgroups(home, file);
    if (pidsDir) fs.writeFileSync(path.join(pidsDir, 'pids.max'), String(cg.limits.pidsMax));
  }
}

/**
 * How many processes of the task the kernel OOM-killed (undefined when the hierarchy cannot say).
 * @param {TaskCgroup} cg
 * @returns {number | undefined}
 */
export function oomKillCount(cg) {
  const file = cg.version === 'v2' ? path.join(cg.paths.unified ?? '', 'memory.events') : path.join(cg.paths.memory ?? '', 'memory.oom_control');
  try {
    const m = /^oom_kill (\d+)$/m.exec(fs.readFileSync(file, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * @param {string} file
 * @param {string} value
 */
function tryWrite(file, value) {
  try {
    fs.writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

/**
 * @param {number[]} pids
 */
function killPids(pids) {
  for (const pid of pids) {
    if (pid <= 1 || pid === process.pid) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}

/**
 * Kills every process in the task's cgroup and resolves once it is empty (or `timeoutMs` passed;
 * then it resolves false).
 * @param {TaskCgroup} cg
 * @param {{ timeoutMs?: number }} [opts]
 * @returns {Promise<boolean>}
 */
export async function killCgroup(cg, opts = {}) {
  const deadline = Date.now() + (opts.timeoutMs ?? 5000);
  let step = 1;
  while (cgroupPids(cg).length > 0) {
    if (Date.now() > deadline) return false;
    if (cg.version === 'v2' && cg.canKill && tryWrite(path.join(cg.paths.unified ?? '', 'cgroup.kill'), '1')) {
      // the kernel kills every member, forks included
    } else if (cg.version === 'v1' && cg.paths.freezer) {
      const dir = cg.paths.freezer;
      if (tryWrite(path.join(dir, 'freezer.state'), 'FROZEN')) {
        for (let i = 0; i < 100; i++) {
          let st = '';
          try {
            st = fs.readFileSync(path.join(dir, 'freezer.state'), 'utf8').trim();
          } catch {}
          if (st !== 'FREEZING') break;
          await pause(1);
        }
      }
      killPids(cgroupPids(cg));
      tryWrite(path.join(dir, 'freezer.state'), 'THAWED');
    } else {
      killPids(cgroupPids(cg));
    }
    await pause(step);
    step = Math.min(step * 2, 50);
  }
  return true;
}

/**
 * Kills what is left in the task's cgroup, removes it, then removes the alloc's parent cgroup
 * when no other task of the alloc is left in it. Idempotent; false when something could not go.
 * @param {TaskCgroup} cg
 * @returns {Promise<boolean>}
 */
export async function removeCgroup(cg) {
  const killed = await killCgroup(cg);
  // rmdir on the thread pool, the hierarchies side by side: a cgroup's removal waits on the
  // kernel (5 % of the event loop at 2,000 allocs when it was synchronous).
  const removed = await Promise.all(
    cgroupDirs(cg).map(async (dir) => {
      let gone = true;
      for (let i = 0; ; i++) {
        try {
          await fs.promises.rmdir(dir);
          break;
        } catch (err) {
          const code = /** @type {NodeJS.ErrnoException} */ (err).code;
          if (code === 'ENOENT') break;
          // EBUSY: the last members are still exiting.
          if (i >= 50) {
            gone = false;
            break;
          }
          await pause(Math.min(2 ** i, 50));
        }
      }
      await fs.promises.rmdir(path.dirname(dir)).catch(() => {}); // the alloc's cgroup, once its last task is gone
      return gone;
    }),
  );
  return killed && removed.every(Boolean);
}
