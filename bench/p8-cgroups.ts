/**
 * P8, cgroups: (a) raw_exec task start, and stop + destroy, with a task cgroup (limits written,
 * the child spawned inside it, the cgroup killed and removed) vs the same driver without
 * cgroups, interleaved in one run; (b) one stats sample of 100 task cgroups vs reading the same
 * files raw (the floor: what the kernel charges for the reads). Root with a writable hierarchy
 * only; elsewhere the results say why they are missing.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { detectCgroups } from '../actors/cgroups/detect.ts';
import { createCgroupManager } from '../actors/cgroups/manager.ts';
import { CgroupStatsReader } from '../actors/cgroups/stats.ts';
import type { TaskCgroup } from '../actors/cgroups/types.ts';
import { createRawExecDriver } from '../actors/drivers/raw-exec.ts';
import type { Driver, TaskConfig } from '../actors/drivers/driver.ts';
import { ratioResult, size, type BenchOptions, type BenchResult } from './lib/results.ts';
import { median, now } from './lib/stats.ts';

/** The files a v1 / v2 stats sample reads. */
const SAMPLE_FILES: Record<string, Array<[string, string]>> = {
  v1: [
    ['memory', 'memory.stat'],
    ['memory', 'memory.usage_in_bytes'],
    ['memory', 'memory.max_usage_in_bytes'],
    ['cpuacct', 'cpuacct.usage'],
    ['cpuacct', 'cpuacct.stat'],
    ['cpu', 'cpu.stat'],
  ],
  v2: [
    ['unified', 'memory.stat'],
    ['unified', 'memory.current'],
    ['unified', 'memory.peak'],
    ['unified', 'memory.swap.current'],
    ['unified', 'cpu.stat'],
  ],
};

function taskConfig(base: string, n: number): TaskConfig {
  const dir = path.join(base, `t${n}`);
  const taskDir = {
    dir,
    localDir: path.join(dir, 'local'),
    secretsDir: path.join(dir, 'secrets'),
    privateDir: path.join(dir, 'private'),
    tmpDir: path.join(dir, 'tmp'),
  };
  for (const d of Object.values(taskDir)) fs.mkdirSync(d, { recursive: true });
  const logsDir = path.join(base, 'logs');
  fs.mkdirSync(logsDir, { recursive: true });
  return {
    id: `bench/${n}`,
    allocId: `p8-${process.pid}-${n}`,
    taskName: 'web',
    task: { name: 'web', driver: 'raw_exec', config: { command: '/bin/sleep', args: ['1000'] }, resources: { memoryMB: 128, cpu: 100 } },
    env: { PATH: '/usr/bin:/bin' },
    taskDir,
    allocDir: { dir: base, sharedDir: base, logsDir },
    logs: { maxFiles: 2, maxFileSizeMB: 1 },
    stateDir: path.join(base, `s${n}`),
  };
}

/**
 * The floor of a start with a cgroup: `sh` writes its own pid into the task cgroup's `tasks` /
 * `cgroup.procs` file of every hierarchy, then execs `/bin/true`; timed from the spawn request to
 * its exit. Without `files`, the same `sh` and exec with no cgroup write.
 */
function shellStart(files: string[]): Promise<number> {
  const t0 = now();
  const script = 'for f; do echo $$ > "$f" || exit 1; done; exec /bin/true';
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', script, 'sh', ...files], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(now() - t0) : reject(new Error(`P8 floor: sh exited ${code} writing ${files.join(' ')}`))));
  });
}

async function cycle(driver: Driver, config: TaskConfig): Promise<{ start: number; stop: number }> {
  const t0 = now();
  const h = await driver.start(config, new AbortController().signal);
  const t1 = now();
  await driver.stop(h, 0, 'SIGKILL');
  await driver.destroy(h, true);
  return { start: t1 - t0, stop: now() - t1 };
}

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  if (process.geteuid?.() !== 0) throw new Error('P8 needs root (cgroups)');
  const parent = `berth-bench-${process.pid}`;
  const d = detectCgroups({ parent });
  if (!d.ok) throw new Error(`P8 needs a writable cgroup hierarchy: ${d.reason}`);
  const mgr = createCgroupManager(d.layout);
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-p8-'));
  const results: BenchResult[] = [];
  try {
    const n = size(opts, 'p8-n', 8, 40);
    const withCg = createRawExecDriver({ cgroups: mgr });
    const without = createRawExecDriver();
    const a = { start: [] as number[], stop: [] as number[] };
    const b = { start: [] as number[], stop: [] as number[] };
    const bare = { with: [] as number[], without: [] as number[] };
    const procsFile = d.layout.version === 'v1' ? 'tasks' : 'cgroup.procs';
    await cycle(without, taskConfig(base, 0)); // warm up the executor's module cache
    for (let i = 1; i <= n; i++) {
      // Interleaved, so load from other work on the machine falls on both sides alike.
      const x = await cycle(withCg, taskConfig(base, 2 * i));
      const y = await cycle(without, taskConfig(base, 2 * i + 1));
      a.start.push(x.start);
      a.stop.push(x.stop);
      b.start.push(y.start);
      b.stop.push(y.stop);
      // The kernel's floor, in the same rhythm: a fresh task cgroup (made untimed, as the
      // executor's cgroup is made before the spawn is timed there too), joined by a bare `sh`.
      const cg = await mgr.create({ allocId: `p8-floor-${process.pid}`, taskName: `f${i}`, resources: { memoryMB: 128, cpu: 100 }, applyLimits: true });
      bare.with.push(await shellStart(Object.values(cg.paths).map((p) => path.join(p, procsFile))));
      bare.without.push(await shellStart([]));
      await mgr.remove(cg);
    }
    opts.log(`P8 ${n} start/stop cycles each, with and without cgroups (${d.layout.version})`);
    results.push(
      ratioResult({
        id: 'P8',
        name: `raw_exec task start with a cgroup (${d.layout.version}) vs without (median of ${n})`,
        unit: 'ms',
        value: median(a.start),
        floor: median(b.start),
        better: 'lower',
        limit: 1.2,
        details: { with: a.start, without: b.start },
      }),
    );
    // What the kernel alone charges for joining a cgroup at spawn, and berth's start against a
    // floor that includes it: berth's start without a cgroup plus the bare shell's added ms.
    const bareAdded = median(bare.with) - median(bare.without);
    results.push(
      ratioResult({
        id: 'P8',
        name: `floor: sh joining the task cgroup (${Object.keys(d.layout.parents).length} ${procsFile} writes) then exec, vs no cgroup (median of ${n})`,
        unit: 'ms',
        value: median(bare.with),
        floor: median(bare.without),
        better: 'lower',
        limit: 1.2,
        details: { with: bare.with, without: bare.without, note: 'the kernel floor: no berth code; if this misses 1.2, so must any start that joins a cgroup' },
      }),
    );
    results.push(
      ratioResult({
        id: 'P8',
        name: 'raw_exec start with a cgroup vs start without + what the bare sh pays for the cgroup',
        unit: 'ms',
        value: median(a.start),
        floor: median(b.start) + Math.max(0, bareAdded),
        better: 'lower',
        limit: 1.2,
        details: { berthWith: median(a.start), berthWithout: median(b.start), shWith: median(bare.with), shWithout: median(bare.without) },
      }),
    );
    results.push(
      ratioResult({
        id: 'P8',
        name: `raw_exec task stop + destroy with a cgroup vs without (median of ${n})`,
        unit: 'ms',
        value: median(a.stop),
        floor: median(b.stop),
        better: 'lower',
        limit: 1.5,
        details: { with: a.stop, without: b.stop },
      }),
    );

    const tasks = 100;
    const cgs: TaskCgroup[] = [];
    for (let i = 0; i < tasks; i++)
      cgs.push(await mgr.create({ allocId: `p8-stats-${process.pid}`, taskName: `t${i}`, resources: { memoryMB: 64, cpu: 100 }, applyLimits: true }));
    const files = SAMPLE_FILES[d.layout.version]!.filter(([key]) => d.layout.parents[key]);
    const reader = new CgroupStatsReader();
    const rounds = size(opts, 'p8-rounds', 20, 100);
    const sample: number[] = [];
    const floor: number[] = [];
    for (let r = 0; r < rounds; r++) {
      let t0 = now();
      for (let i = 0; i < tasks; i++) reader.read(`t${i}`, cgs[i]!);
      sample.push(now() - t0);
      t0 = now();
      for (const cg of cgs) for (const [key, f] of files) fs.readFileSync(path.join(cg.paths[key]!, f), 'utf8');
      floor.push(now() - t0);
    }
    for (const cg of cgs) await mgr.remove(cg);
    results.push(
      ratioResult({
        id: 'P8',
        name: `one stats sample of ${tasks} task cgroups vs reading their files raw (median of ${rounds})`,
        unit: 'ms',
        value: median(sample),
        floor: median(floor),
        better: 'lower',
        limit: 1.5,
      }),
    );
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
    for (const p of Object.values(d.layout.parents)) {
      try {
        fs.rmdirSync(p);
      } catch {}
    }
  }
  return results;
}
