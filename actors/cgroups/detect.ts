/**
 * Finds, once at client start, which cgroup hierarchy berth can use and where its parent cgroup
 * goes. berth may itself run inside a cgroup: the parent is made under berth's own cgroup in
 * each hierarchy (`<mount>/<own>/<parent>`), unless `parent` is absolute (`/berth`: from the
 * hierarchy's root).
 *
 * ```
 *  mode auto:  unified mount with controllers ──► v2
 *              v1 controller mounts (memory, cpu, …) writable ──► v1
 *              unified mount without controllers, writable ──► v2 (process tracking + cgroup.kill)
 *              nothing writable (not root, read-only) ──► none, with the reason
 * ```
 * @module
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseCpuList } from '../../machines/policy/cgroup-limits.ts';
import { CgroupUnavailableError } from './errors.ts';
import { parseSelfCgroup } from './procs.mjs';
import { readText, readTextAsync, writeIn, writeInAsync } from './fsutil.ts';
import { UNIFIED, V1_CONTROLLERS, type CgroupLayout } from './types.ts';
import { errorText } from '../../model/error-text.ts';

export { parseSelfCgroup };

/** `ClientOptions.cgroups`: where and whether berth uses cgroups. */
export interface CgroupOptions {
  /** 'auto' (default) picks as above; 'v1' / 'v2' insist (and fail the client when unusable); 'off' uses none. */
  mode?: 'auto' | 'v1' | 'v2' | 'off';
  /**
   * berth's parent cgroup: a relative name is made under berth's own cgroup, an absolute path from
   * the hierarchy's root. Default `$BERTH_CGROUP_PARENT`, else `berth`.
   */
  parent?: string;
  /** Most processes per task (pids.max); default none. */
  pidsLimit?: number;
  /**
   * Where the hierarchies are mounted, instead of reading /proc/self/mountinfo (tests point this
   * at a fake cgroupfs tree): `v1` maps controller → mount dir, `v2` is the unified mount dir.
   */
  mounts?: { v1?: Record<string, string>; v2?: string };
  /** berth's own cgroups in /proc/self/cgroup format (default: read from /proc). */
  selfCgroup?: string;
}

/** What detection concluded. */
export type CgroupDetection =
  | { ok: true; layout: CgroupLayout; summary: string }
  /** `reason` is short ("not root"); `detail`, when given, holds every attempt's reason in full. */
  | { ok: false; reason: string; detail?: string };

/** Cgroup mounts from /proc/self/mountinfo: v1 controller → mount dir, and the unified mount. */
export function findCgroupMounts(mountinfo = readText('/proc/self/mountinfo') ?? ''): { v1: Record<string, string>; v2?: string } {
  const v1: Record<string, string> = {};
  let v2: string | undefined;
  for (const line of mountinfo.split('\n')) {
    const [pre, post] = line.split(' - ');
    if (!pre || !post) continue;
    const mountPoint = pre.split(' ')[4]?.replace(/\\040/g, ' ');
    const [fstype, , superOpts = ''] = post.split(' ');
    if (!mountPoint) continue;
    if (fstype === 'cgroup2') v2 ??= mountPoint;
    else if (fstype === 'cgroup') {
      for (const opt of superOpts.split(',')) if ((V1_CONTROLLERS as readonly string[]).includes(opt)) v1[opt] ??= mountPoint;
    }
  }
  return { v1, ...(v2 ? { v2 } : {}) };
}

const msgOf = (e: unknown) => (e as NodeJS.ErrnoException).code ?? errorText(e);

function parentDir(mount: string, own: string | undefined, parent: string): string {
  return parent.startsWith('/') ? path.join(mount, parent) : path.join(mount, own ?? '/', parent);
}

const CPUSET_FILES = ['cpuset.cpus', 'cpuset.mems'] as const;

/** v1 cpuset cgroups start with no cpus or mems: give a new level its parent's. */
export function initCpuset(dir: string): void {
  for (const f of CPUSET_FILES) {
    if (readText(path.join(dir, f))) continue;
    const from = readText(path.join(path.dirname(dir), f));
    if (from) writeIn(dir, f, from);
  }
}

/**
 * {@link initCpuset} on the thread pool, for a task's cgroup: a v1 cpuset write rebuilds the
 * kernel's scheduling domains (milliseconds each), which on the event loop held up every other
 * alloc's start (15 % of the agent's time starting 1,000 allocs).
 */
export async function initCpusetAsync(dir: string): Promise<void> {
  for (const f of CPUSET_FILES) {
    if (await readTextAsync(path.join(dir, f))) continue;
    const from = await readTextAsync(path.join(path.dirname(dir), f));
    if (from) await writeInAsync(dir, f, from);
  }
}

function onlineCpus(): number[] {
  const t = readText('/sys/devices/system/cpu/online');
  const list = t ? parseCpuList(t) : [];
  return list.length ? list : os.cpus().map((_, i) => i);
}

function tryV1(mounts: Record<string, string>, self: Record<string, string>, parent: string): CgroupDetection {
  const parents: Record<string, string> = {};
  const failures: string[] = [];
  for (const c of V1_CONTROLLERS) {
    const mount = mounts[c];
    if (!mount) continue;
    const dir = parentDir(mount, self[c], parent);
    try {
      fs.mkdirSync(dir, { recursive: true });
      if (c === 'cpuset') initCpuset(dir);
      fs.accessSync(path.join(dir, 'cgroup.procs'), fs.constants.W_OK);
      parents[c] = dir;
    } catch (e) {
      failures.push(`${dir}: ${msgOf(e)}`);
    }
  }
  const controllers = Object.keys(parents);
  if (!controllers.includes('memory') && !controllers.includes('cpu') && !controllers.includes('freezer')) {
    return {
      ok: false,
      reason:
        controllers.length || failures.length
          ? `cgroup v1 not writable (${failures.join('; ') || 'no memory, cpu or freezer controller'})`
          : 'no cgroup v1 controllers mounted',
    };
  }
  const cpus = parents.cpuset
    ? parseCpuList(readText(path.join(parents.cpuset, 'cpuset.effective_cpus')) ?? readText(path.join(parents.cpuset, 'cpuset.cpus')) ?? '')
    : [];
  const used: Record<string, string> = {};
  for (const c of controllers) used[c] = mounts[c]!;
  return {
    ok: true,
    layout: { version: 'v1', parents, mounts: used, controllers, canKill: controllers.includes('freezer'), cpus: cpus.length ? cpus : onlineCpus() },
    summary: `cgroup v1 (${controllers.join(', ')}) under ${parent.startsWith('/') ? parent : `<own cgroup>/${parent}`}`,
  };
}

function tryV2(mount: string, self: Record<string, string>, parent: string): CgroupDetection {
  const dir = parentDir(mount, self[UNIFIED], parent);
  const own = path.dirname(dir);
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.accessSync(path.join(dir, 'cgroup.procs'), fs.constants.W_OK);
  } catch (e) {
    return { ok: false, reason: `cgroup v2 at ${mount} not writable (${dir}: ${msgOf(e)})` };
  }
  // Hand the controllers down to berth's children. This fails (EBUSY) when berth's own cgroup
  // holds processes and is not the root: then tasks are tracked and killed, but not limited.
  const wanted = ['memory', 'cpu', 'cpuset', 'pids'];
  for (const d of [own, dir]) {
    const avail = (readText(path.join(d, 'cgroup.controllers')) ?? '').split(/\s+/).filter((c) => wanted.includes(c));
    for (const c of avail) {
      try {
        writeIn(d, 'cgroup.subtree_control', `+${c}`);
      } catch {}
    }
  }
  const controllers = (readText(path.join(dir, 'cgroup.subtree_control')) ?? '').split(/\s+/).filter((c) => wanted.includes(c));
  const canKill = fs.existsSync(path.join(dir, 'cgroup.kill'));
  const cpus = parseCpuList(readText(path.join(dir, 'cpuset.cpus.effective')) ?? '');
  return {
    ok: true,
    layout: { version: 'v2', parents: { [UNIFIED]: dir }, mounts: { [UNIFIED]: mount }, controllers, canKill, cpus: cpus.length ? cpus : onlineCpus() },
    summary: controllers.length
      ? `cgroup v2 (${controllers.join(', ')}${canKill ? ', cgroup.kill' : ''}) at ${dir}`
      : `cgroup v2 at ${dir}: process tracking${canKill ? ' and cgroup.kill' : ''} only, no controllers to limit with`,
  };
}

/**
 * Detects the hierarchy and makes berth's parent cgroup. Never throws for `auto` (an unusable
 * machine gives `{ ok: false, reason }`); throws {@link CgroupUnavailableError} when a forced
 * mode cannot be had.
 */
export function detectCgroups(opts: CgroupOptions = {}): CgroupDetection {
  const mode = opts.mode ?? 'auto';
  if (mode === 'off') return { ok: false, reason: 'cgroups turned off (cgroups.mode "off")' };
  const parent = opts.parent ?? process.env.BERTH_CGROUP_PARENT ?? 'berth';
  if (!parent || parent.split('/').includes('..')) throw new CgroupUnavailableError(`invalid cgroup parent ${JSON.stringify(parent)}`);
  const found = opts.mounts ?? findCgroupMounts();
  const v1 = found.v1 ?? {};
  const self = parseSelfCgroup(opts.selfCgroup ?? readText('/proc/self/cgroup') ?? '');
  const v2HasControllers = !!found.v2 && /\bmemory\b/.test(readText(path.join(found.v2, 'cgroup.controllers')) ?? '');
  const attempts: Array<() => CgroupDetection> = [];
  if (mode === 'v2' || (mode === 'auto' && v2HasControllers))
    attempts.push(() => (found.v2 ? tryV2(found.v2, self, parent) : { ok: false, reason: 'no cgroup v2 mount' }));
  if (mode === 'v1' || mode === 'auto')
    attempts.push(() => (Object.keys(v1).length ? tryV1(v1, self, parent) : { ok: false, reason: 'no cgroup v1 controllers mounted' }));
  if (mode === 'auto' && found.v2 && !v2HasControllers) attempts.push(() => tryV2(found.v2!, self, parent));
  const reasons: string[] = [];
  for (const attempt of attempts) {
    const r = attempt();
    if (r.ok) return r;
    reasons.push(r.reason);
  }
  const reason = reasons.join('; ') || 'no cgroup hierarchy mounted';
  if (mode !== 'auto') throw new CgroupUnavailableError(`cgroups.mode "${mode}": ${reason}`);
  // Not root is the usual cause and all a reader needs; the per-controller errors stay in `detail`.
  if (process.geteuid?.() !== 0 && /EACCES|EPERM|not writable|permission denied/i.test(reason)) return { ok: false, reason: 'not root', detail: reason };
  return { ok: false, reason };
}

/**
 * The name of berth's parent cgroup as Nomad's `NOMAD_PARENT_CGROUP` gives it: the path below
 * the hierarchy's mount, absolute on v1 (Nomad's `/nomad`), a bare name on v2 (`nomad.slice`).
 */
export function parentCgroupName(layout: CgroupLayout): string {
  const [key, dir] = Object.entries(layout.parents)[0]!;
  const rel = path.relative(layout.mounts[key] ?? '/', dir);
  return layout.version === 'v1' ? `/${rel}` : rel;
}
