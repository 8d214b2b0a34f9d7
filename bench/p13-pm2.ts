/**
 * P13, a thousand long-running processes under berth's agent and under pm2, in the same run:
 * - berth: an agent in its own process (bench/p11-child.ts, a data dir, capacity raised) runs a
 *   `count = N` service job of raw_exec `/bin/sleep 3600` tasks; start is from the register request
 *   to every task machine `running`, stop from the job's deregister (DELETE /v1/job) to no task
 *   process left in /proc.
 * - pm2 (node_modules/pm2, its own PM2_HOME in a temp dir): an ecosystem file of N apps running
 *   `/bin/sleep 3600` (`interpreter: none`); start is from `pm2 start` to N such processes alive
 *   in /proc, stop from `pm2 delete all` to none left. Its daemon is killed at the end.
 * Memory per process beyond the tasks' own: (MemAvailable before - after, from /proc/meminfo)
 * - the agent's own VmRSS growth (berth; pm2's daemon starts inside the window, so it counts)
 * - the sum of the tasks' Pss (/proc/<pid>/smaps_rollup), all over N. Tasks are found by a marker
 * in their environment. Since MemAvailable moves with whatever else the machine runs, the details
 * also hold the Pss of the overhead processes per task (berth: the shims and the supervisor; pm2:
 * its daemon) as a cross-check. Targets: start ratio (berth / pm2) <= 2, berth <= 3 MB per task.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { safeRemove, tempDir } from './lib/fsutil.ts';
import { benchPath } from './lib/proc.ts';
import { absoluteResult, ratioResult, size, type BenchOptions, type BenchResult } from './lib/results.ts';
import { ServerChild } from './lib/server-child.ts';
import { now, sleep } from './lib/stats.ts';
import { sleepersJobHcl } from './lib/sleepers.ts';

const MB = 1024 * 1024;

/** Pids of `sleep` processes whose environment holds `P13_MARK=marker` (berth's per-task shim
 * inherits the task's environment too, but it is overhead, not the task: `shims` lists those). */
function pidsWith(marker: string, shims = false): number[] {
  const needle = `P13_MARK=${marker}`;
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if ((readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'sleep') === shims) continue;
      if (readFileSync(`/proc/${d}/environ`, 'latin1').split('\0').includes(needle)) out.push(Number(d));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

/** Pids of processes whose command line contains every one of `parts`. */
function pidsByCmdline(...parts: string[]): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (parts.every((p) => cmd.includes(p))) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

/** The machine's MemAvailable, bytes. */
function memAvailable(): number {
  const m = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
  if (!m) throw new Error('no MemAvailable in /proc/meminfo');
  return Number(m[1]) * 1024;
}

/** A process's VmRSS, bytes (0 once gone). */
function rss(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Sum of the Pss of `pids`, bytes (each shared page split among its sharers). */
function pssSum(pids: number[]): number {
  let total = 0;
  for (const p of pids) {
    try {
      const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${p}/smaps_rollup`, 'utf8'));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      // gone
    }
  }
  return total;
}

/** Polls /proc (every 20 ms) until `pred(count of marked processes)`; ms from `t0`. */
async function untilCount(marker: string, pred: (n: number) => boolean, t0: number, limitMs: number, what: string): Promise<number> {
  for (;;) {
    const n = pidsWith(marker).length;
    if (pred(n)) return now() - t0;
    if (now() - t0 > limitMs) throw new Error(`P13: ${what} not done after ${limitMs / 1000} s (${n} processes)`);
    await sleep(20);
  }
}

const killAll = (marker: string) => killPids([...pidsWith(marker), ...pidsWith(marker, true)]);

function killPids(pids: number[]): void {
  for (const p of pids) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

const jobHcl = (n: number, marker: string) =>
  sleepersJobHcl({ id: 'p13', type: 'service', count: n, command: '/bin/sleep', args: ['3600'], env: { P13_MARK: marker } });

interface Side {
  startMs: number;
  stopMs: number;
  /** Memory per process beyond the tasks' own, bytes. */
  perTask: number;
  details: Record<string, number>;
}

type Hello = { url: string };

async function berth(n: number, dir: string, opts: BenchOptions): Promise<Side> {
  const marker = `berth-${process.pid}-${Date.now()}`;
  let agent: ServerChild<Hello> | undefined;
  try {
    agent = await ServerChild.start<Hello>('p11-child.ts', { dataDir: path.join(dir, 'berth'), expect: 0 }, opts.log);
    const pid = agent.proc.pid!;
    const avail0 = memAvailable();
    const rss0 = rss(pid);
    opts.log(`P13 berth: registering ${n} raw_exec allocs`);
    const fresh = await agent.ask<{ freshMs?: number; error?: string }>({ cmd: 'register', hcl: jobHcl(n, marker), n });
    if (fresh.error) throw new Error(fresh.error);
    const pids = pidsWith(marker);
    if (pids.length !== n) throw new Error(`P13 berth: expected ${n} task processes, found ${pids.length}`);
    const avail1 = memAvailable();
    const rss1 = rss(pid);
    const tasks = pssSum(pids);
    const drop = avail0 - avail1;
    const perTask = (drop - (rss1 - rss0) - tasks) / n;
    // A cross-check that other work on the machine does not move: the Pss of the shims and the supervisor.
    const overhead = pssSum([...pidsWith(marker, true), ...pidsByCmdline('supervisor.mjs', dir)]);
    opts.log(`P13 berth: running in ${fresh.freshMs!.toFixed(0)} ms; stopping the job`);
    // Stop through the API (job deregister), as pm2's side does: destroying the runners on the
    // client instead has the scheduler replace the lost allocs of a service job.
    const t1 = now();
    const r = await fetch(`${agent.hello.url}/v1/job/p13`, { method: 'DELETE' });
    if (!r.ok) throw new Error(`P13 berth: job stop: ${r.status} ${await r.text()}`);
    const stopMs = await untilCount(marker, (c) => c === 0, t1, 60_000 + n * 300, `berth stop of ${n}`);
    await agent.ask({ cmd: 'destroy' });
    await agent.close();
    agent = undefined;
    return {
      startMs: fresh.freshMs!,
      stopMs,
      perTask,
      details: { availDropMB: drop / MB, agentRssGrowthMB: (rss1 - rss0) / MB, tasksPssMB: tasks / MB, overheadPssPerTaskMB: overhead / n / MB },
    };
  } finally {
    // `ask` throws at once while a question is pending (a failed register): close kills it then.
    if (agent)
      await Promise.resolve(agent)
        .then((a) => a.ask({ cmd: 'destroy' }))
        .catch(() => {});
    await agent?.close();
    killAll(marker);
    killPids(pidsByCmdline('supervisor.mjs', dir));
  }
}

/** Runs pm2's CLI with `args` under `home`; resolves with its exit code. */
function pm2(bin: string, home: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [bin, ...args], { env: { ...process.env, PM2_HOME: home }, stdio: 'ignore' });
    p.once('error', reject);
    p.once('exit', (code) => resolve(code ?? 1));
  });
}

async function pm2Side(n: number, dir: string, opts: BenchOptions): Promise<Side> {
  const bin = process.env.P13_PM2 ?? benchPath('../node_modules/pm2/bin/pm2');
  if (!existsSync(bin)) throw new Error(`P13: no pm2 at ${bin} (npm install; it is a devDependency)`);
  const home = path.join(dir, 'pm2-home');
  const marker = `pm2-${process.pid}-${Date.now()}`;
  const eco = path.join(dir, 'ecosystem.json');
  const apps = Array.from({ length: n }, (_, i) => ({
    name: `p13-${i}`,
    script: '/bin/sleep',
    args: '3600',
    interpreter: 'none',
    autorestart: false,
    env: { P13_MARK: marker },
  }));
  writeFileSync(eco, JSON.stringify({ apps }));
  try {
    const avail0 = memAvailable();
    opts.log(`P13 pm2: starting ${n} apps`);
    const t0 = now();
    const code = await pm2(bin, home, ['start', eco]);
    if (code !== 0) throw new Error(`P13: pm2 start exited ${code}`);
    const startMs = await untilCount(marker, (c) => c >= n, t0, 60_000 + n * 300, `pm2 start of ${n}`);
    const pids = pidsWith(marker);
    const avail1 = memAvailable();
    const tasks = pssSum(pids);
    const drop = avail0 - avail1;
    const daemon = Number(readFileSync(path.join(home, 'pm2.pid'), 'utf8').trim());
    const overhead = pssSum([daemon]);
    opts.log(`P13 pm2: running in ${startMs.toFixed(0)} ms; stopping`);
    const t1 = now();
    const del = await pm2(bin, home, ['delete', 'all']);
    if (del !== 0) throw new Error(`P13: pm2 delete exited ${del}`);
    const stopMs = await untilCount(marker, (c) => c === 0, t1, 60_000 + n * 300, `pm2 stop of ${n}`);
    return {
      startMs,
      stopMs,
      perTask: (drop - tasks) / n,
      details: { availDropMB: drop / MB, daemonRssMB: rss(daemon) / MB, tasksPssMB: tasks / MB, overheadPssPerTaskMB: overhead / n / MB },
    };
  } finally {
    await pm2(bin, home, ['kill']).catch(() => 1);
    killAll(marker);
  }
}

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  const n = size(opts, 'p13-n', 100, 1000);
  const dir = tempDir('p13');
  try {
    const b = await berth(n, dir, opts);
    const p = await pm2Side(n, dir, opts);
    const details = { n, berth: { ...b.details, startMs: b.startMs, stopMs: b.stopMs }, pm2: { ...p.details, startMs: p.startMs, stopMs: p.stopMs } };
    return [
      ratioResult({
        id: 'P13',
        name: `start ${n} long-running processes: berth agent (raw_exec) vs pm2`,
        unit: 'ms',
        value: b.startMs,
        floor: p.startMs,
        better: 'lower',
        limit: 2,
        details,
      }),
      absoluteResult({
        id: 'P13',
        name: `memory per process beyond the tasks' own, berth vs pm2 (${n})`,
        unit: 'MB',
        value: b.perTask / MB,
        floor: p.perTask / MB,
        better: 'lower',
        limit: 3,
        details,
      }),
      ratioResult({
        id: 'P13',
        name: `stop ${n} long-running processes: berth agent vs pm2`,
        unit: 'ms',
        value: b.stopMs,
        floor: p.stopMs,
        better: 'lower',
        limit: 2,
        extraTarget: 'berth stop <= 30 s',
        extraMet: b.stopMs <= 30_000,
        details,
      }),
    ];
  } finally {
    await safeRemove(dir);
  }
}
