/**
 * P1, lifecycle throughput: N allocations (one mock task each) added, running, stopped by an
 * update and destroyed, with real alloc dirs, beside a floor of N bare five-state actors driven
 * through the same four transitions plus the same directories made and removed with plain
 * (synchronous) fs calls, and as root the same tmpfs mounts done by one process looping over
 * mount(2)/umount2(2). Each side runs in its own child process; the non-root run is a child as
 * `nobody` (setpriv) on a data dir it owns.
 *
 * P1 with cgroups (root, with a writable cgroup hierarchy): the root run again with a cgroup per
 * task made, limited, killed and removed by berth's cgroup manager, against the root floor of
 * the same run (the figure), and beside it against that floor plus the same cgroup dirs
 * made, limited and removed with plain calls.
 */
import { chownSync } from 'node:fs';
import { detectCgroups } from '../actors/cgroups/detect.ts';
import { errorText } from '../model/error-text.ts';
import { mountTool, safeRemove, tempDir } from './lib/fsutil.ts';
import { runNodeScript } from './lib/proc.ts';
import { ratioResult, size, skipped, type BenchOptions, type BenchResult } from './lib/results.ts';

type Phases = Record<string, number>;

async function side(mode: 'berth' | 'floor', n: number, asNobody: boolean, tool: string | null, opts: BenchOptions, cgroupParent?: string): Promise<Phases> {
  const dir = tempDir(`p1-${mode}`);
  try {
    if (asNobody) chownSync(dir, 65534, 65534);
    return await runNodeScript<Phases>(
      'p1-child.ts',
      { mode, n, dir, tool, ...(cgroupParent ? { cgroupParent } : {}) },
      {
        ...(asNobody ? { asUser: { uid: 65534, gid: 65534 } } : {}),
        onLog: (l) => opts.log(`  [p1 ${mode}] ${l}`),
        timeoutMs: 20 * 60_000,
      },
    );
  } finally {
    await safeRemove(dir);
  }
}

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  const n = size(opts, 'p1-n', 100, 10_000);
  const isRoot = process.geteuid?.() === 0;
  const toolDir = tempDir('p1-tool');
  const out: BenchResult[] = [];
  try {
    const tool = isRoot ? mountTool(toolDir) : null;
    const runs: Array<{ label: string; nobody: boolean }> = isRoot
      ? [
          { label: 'non-root', nobody: true },
          { label: 'root', nobody: false },
        ]
      : [{ label: 'non-root', nobody: false }];
    let rootFloor: Phases | undefined;
    for (const { label, nobody } of runs) {
      opts.log(`P1 ${label}: floor, n=${n}`);
      const f = await side('floor', n, nobody, tool, opts);
      opts.log(`P1 ${label}: berth, n=${n}`);
      const b = await side('berth', n, nobody, tool, opts);
      if (label === 'root') rootFloor = f;
      out.push(
        ratioResult({
          id: 'P1',
          name: `lifecycle x${n}, ${label}`,
          unit: 'ms',
          value: b.totalMs!,
          floor: f.totalMs!,
          better: 'lower',
          limit: 2,
          details: {
            n,
            berth: b,
            floor: f,
            berthAllocsPerSec: (n / b.totalMs!) * 1000,
            mounts: label === 'root' ? (tool ? 'floor: one C process looping mount(2)' : 'floor: one python3 ctypes process') : 'none',
          },
        }),
      );
    }
    if (!isRoot) out.push(skipped('P1', `lifecycle x${n}, root`, 'not running as root: no mounts to measure'));
    // Its failure must not take the rows above with it.
    out.push(
      ...(await withCgroups(n, tool, rootFloor, opts).catch((err: unknown) => [
        { ...skipped('P1', `lifecycle x${n}, root, a cgroup per task`, ''), target: `error: ${errorText(err)}`, details: { error: errorText(err) } },
      ])),
    );
  } finally {
    await safeRemove(toolDir);
  }
  return out;
}

/** P1 with a cgroup per task: root only, against the root floor measured just before. */
async function withCgroups(n: number, tool: string | null, rootFloor: Phases | undefined, opts: BenchOptions): Promise<BenchResult[]> {
  const name = `lifecycle x${n}, root, a cgroup per task`;
  if (!rootFloor) return [skipped('P1', name, 'not running as root: no cgroups to make')];
  const cgroupParent = `berth-bench-p1-${process.pid}`;
  const d = detectCgroups({ parent: cgroupParent });
  if (!d.ok) return [skipped('P1', name, `no writable cgroup hierarchy: ${d.reason}`)];
  opts.log(`P1 root + cgroups (${d.layout.version}): floor with the same cgroup dirs, n=${n}`);
  const fc = await side('floor', n, false, tool, opts, cgroupParent);
  opts.log(`P1 root + cgroups (${d.layout.version}): berth, n=${n}`);
  const b = await side('berth', n, false, tool, opts, cgroupParent);
  const details = { n, cgroups: d.layout.version, hierarchies: Object.keys(d.layout.parents), berth: b, rootFloor, floorWithCgroups: fc };
  return [
    ratioResult({
      id: 'P1',
      name: `${name} (${d.layout.version}) vs the root floor`,
      unit: 'ms',
      value: b.totalMs!,
      floor: rootFloor.totalMs!,
      better: 'lower',
      limit: 2,
      details,
    }),
    ratioResult({
      id: 'P1',
      name: `same, vs the root floor + the same cgroups made and removed with plain calls`,
      unit: 'ms',
      value: b.totalMs!,
      floor: fc.totalMs!,
      better: 'lower',
      limit: 2,
      details: { n, note: 'the floor with the kernel cost of the cgroups in it' },
    }),
  ];
}
