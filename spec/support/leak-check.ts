/**
 * A root hook plugin (loaded by .mocharc.json): after the whole suite, nothing berth started may
 * be left behind — no child process or executor (of this checkout), no extra file descriptor, no pending timer, no
 * mount under the temp dir, no cgroup under berth's parent, no temp dir or file. A leak fails the run like any test.
 *
 * The suite's clients (and the hosts it spawns, which inherit the environment) put their cgroups
 * under a parent of this run's own, and their temp dirs under a TMPDIR of this run's own (which
 * os.tmpdir() and child processes follow), so parallel runs on one machine never see each other's.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmdirSync, rmSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shutdownMountHelper } from '../../actors/allocdir/mounts.ts';
import { findCgroupMounts, parseSelfCgroup } from '../../actors/cgroups/detect.ts';
import { SUPERVISOR_PATH } from '../../actors/drivers/executor/client.ts';
import { SHIM_MARKER } from '../../actors/drivers/executor/shim.mjs';

process.env.BERTH_CGROUP_PARENT ??= `berth-test-${process.pid}`;
// A supervisor leaves soon after its last task: the check below finds none left.
process.env.BERTH_SUPERVISOR_IDLE_MS ??= '100';

/** berth's parent cgroup of this run in every mounted hierarchy. */
function cgroupParents(): string[] {
  const parent = process.env.BERTH_CGROUP_PARENT!;
  const mounts = findCgroupMounts();
  const self = parseSelfCgroup(readFileSync('/proc/self/cgroup', 'utf8'));
  const out = Object.entries(mounts.v1).map(([c, m]) => join(m, self[c] ?? '/', parent));
  if (mounts.v2) out.push(join(mounts.v2, self.unified ?? '/', parent));
  return [...new Set(out)];
}

/** An alloc cgroup with its task cgroups and the processes in each: what a leak report needs to find its cause. */
function describeCgroup(dir: string): string {
  const procs = (d: string) => {
    try {
      return readFileSync(join(d, 'cgroup.procs'), 'utf8').trim().split('\n').filter(Boolean).join(',') || 'none';
    } catch {
      return '?';
    }
  };
  let tasks: string[] = [];
  try {
    tasks = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `${e.name} (processes: ${procs(join(dir, e.name))})`);
  } catch {
    // removed meanwhile
  }
  return `${dir} (processes: ${procs(dir)}; tasks: ${tasks.join(', ') || 'none'})`;
}

/** Cgroups left under berth's parent (alloc or task cgroups). */
function leftoverCgroups(): string[] {
  const out: string[] = [];
  for (const p of cgroupParents()) {
    try {
      for (const e of readdirSync(p, { withFileTypes: true })) if (e.isDirectory()) out.push(describeCgroup(join(p, e.name)));
    } catch {
      // no such parent: nothing made there
    }
  }
  return out;
}

const suiteTmp = mkdtempSync(join(tmpdir(), 'berth-suite-'));
chmodSync(suiteTmp, 0o1777); // like /tmp: tasks and spawned hosts run as nobody below it
process.env.TMPDIR = suiteTmp;

/** Open fds, except libuv's per-loop inotify fd: created on the first fs.watch, kept for life. */
function fdTargets(): Map<string, string> {
  const out = new Map<string, string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target !== 'anon_inode:inotify') out.set(fd, target);
    } catch {
      // the fd readdir itself used
    }
  }
  return out;
}
const fds = () => fdTargets().size;
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
/** How long the pool may take to answer one fs call after a test (it takes microseconds when free). */
const POOL_PROBE_MS = 5000;

/** libuv's threadpool did not answer one fs call within the bound: its threads are blocked. */
export class PoolHeldError extends Error {
  override name = 'PoolHeldError';
}

/**
 * One fs call on libuv's pool (`access('/')`), bounded: resolves when the pool answers, rejects with
 * a {@link PoolHeldError} when it does not within `boundMs`. The hook below runs it after each test.
 */
export async function probePool(boundMs = POOL_PROBE_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const held = await Promise.race([access('/').then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), boundMs)))]);
  clearTimeout(timer);
  if (held) throw new PoolHeldError(`libuv's threadpool did not answer within ${boundMs} ms after this test: it left the pool's threads blocked`);
}
/** mocha's own timeout timer for the running afterAll hook. */
const OWN_HOOK_TIMER = 1;

/** Processes whose parent is this one, or any berth executor anywhere. */
function leftoverProcesses(): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      if (preexisting.has(pid) || cmd.includes('esbuild')) continue; // tsx's compiler service is not ours
      // Supervisors of this checkout and shims of this run only: other checkouts on a shared machine run their own suites.
      if (ppid === process.pid || cmd.includes(SUPERVISOR_PATH) || (cmd.includes(SHIM_MARKER) && cmd.includes(suiteTmp))) out.push(`${pid}: ${cmd}`);
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

function leftoverMounts(): string[] {
  const base = tmpdir();
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((p) => p.startsWith(`${base}/berth`));
}

let before = { fds: 0, timers: 0 };
let beforeFds = new Map<string, string>();
// What other runs (a demo, another suite) left on this machine is not this suite's leak.
const preexisting = new Set<string>();
let preexistingMounts = new Set<string>();

export const mochaHooks = {
  beforeAll() {
    before = { fds: fds(), timers: timers() };
    beforeFds = fdTargets();
    for (const p of leftoverProcesses()) preexisting.add(p.split(':')[0]!);
    preexistingMounts = new Set(leftoverMounts());
  },
  /**
   * One fs call on libuv's pool, bounded, after each test: a test that strands the pool's threads
   * (a FIFO open no writer ever meets, a lookup that never returns) fails here, by name, and the run
   * ends, instead of every later async fs call of the run waiting without a word.
   */
  async afterEach() {
    await probePool();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(10_000);
    await shutdownMountHelper();
    // Let exits, closes and unrefs that are already under way settle.
    for (let i = 0; i < 40 && (leftoverProcesses().length || leftoverCgroups().length || fds() > before.fds || timers() > before.timers + OWN_HOOK_TIMER); i++)
      await new Promise((r) => setTimeout(r, 25));
    const problems: string[] = [];
    const procs = leftoverProcesses();
    if (procs.length) problems.push(`processes left behind:\n  ${procs.join('\n  ')}`);
    if (fds() > before.fds) {
      const now = fdTargets();
      const fresh = [...now].filter(([fd, t]) => beforeFds.get(fd) !== t).map(([fd, t]) => `${fd} -> ${t}`);
      problems.push(`file descriptors: ${before.fds} before the suite, ${now.size} after; new:\n  ${fresh.join('\n  ')}`);
    }
    if (timers() > before.timers + OWN_HOOK_TIMER) problems.push(`timers: ${before.timers} before the suite, ${timers() - OWN_HOOK_TIMER} after`);
    const mounts = leftoverMounts().filter((m) => !preexistingMounts.has(m));
    if (mounts.length) problems.push(`mounts left behind:\n  ${mounts.join('\n  ')}`);
    const cgroups = leftoverCgroups();
    if (cgroups.length) problems.push(`cgroups left behind:\n  ${cgroups.join('\n  ')}`);
    else {
      for (const p of cgroupParents()) {
        try {
          rmdirSync(p);
        } catch {}
      }
    }
    // Not leaks: tsx's compile caches, and the browser specs' screenshots (kept on purpose, with the dir).
    const kept = (n: string) => n.startsWith('tsx-') || n === 'berth-viewer-screenshots';
    const files = readdirSync(suiteTmp).filter((n) => !kept(n));
    if (files.length) problems.push(`temp files left behind in ${suiteTmp}:\n  ${files.join('\n  ')}`);
    else if (!readdirSync(suiteTmp).some((n) => n === 'berth-viewer-screenshots')) rmSync(suiteTmp, { recursive: true, force: true });
    if (problems.length) throw new Error(`the suite leaked:\n${problems.join('\n')}`);
  },
};
