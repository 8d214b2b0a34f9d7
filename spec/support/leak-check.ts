/**
 * A root hook plugin (loaded by .mocharc.json): after the whole suite, nothing berth started may
 * be left behind — no child or executor process, no extra file descriptor, no pending timer, no
 * mount under the temp dir, no temp dir or file. A leak fails the run like any test.
 *
 * The suite gets a temp dir of its own (TMPDIR, which os.tmpdir() and child processes follow),
 * so what other runs on the same machine leave in /tmp is never taken for this suite's leak.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shutdownMountHelper } from '../../actors/allocdir/mounts.ts';

const suiteTmp = mkdtempSync(join(tmpdir(), 'berth-suite-'));
chmodSync(suiteTmp, 0o755); // exec tasks run as nobody below it
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
      if (ppid === process.pid || cmd.includes('executor.mjs')) out.push(`${pid}: ${cmd}`);
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

function leftoverMounts(): string[] {
  const base = tmpdir();
  return readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '').filter((p) => p.startsWith(`${base}/berth`));
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
  async afterAll(this: Mocha.Context) {
    this.timeout(10_000);
    await shutdownMountHelper();
    // Let exits, closes and unrefs that are already under way settle.
    for (let i = 0; i < 20 && (leftoverProcesses().length || fds() > before.fds || timers() > before.timers + OWN_HOOK_TIMER); i++) await new Promise((r) => setTimeout(r, 25));
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
    const files = readdirSync(suiteTmp).filter((n) => !n.startsWith('tsx-')); // tsx's compile cache, not berth's
    if (files.length) problems.push(`temp files left behind in ${suiteTmp}:\n  ${files.join('\n  ')}`);
    else rmSync(suiteTmp, { recursive: true, force: true });
    if (problems.length) throw new Error(`the suite leaked:\n${problems.join('\n')}`);
  },
};
