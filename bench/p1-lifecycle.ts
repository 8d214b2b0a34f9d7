/**
 * P1, lifecycle throughput: N allocations (one mock task each) added, running, stopped by an
 * update and destroyed, with real alloc dirs, beside a floor of N bare five-state actors driven
 * through the same four transitions plus the same directories made and removed with plain
 * (synchronous) fs calls, and as root the same tmpfs mounts done by one process looping over
 * mount(2)/umount2(2). Each side runs in its own child process; the non-root run is a child as
 * `nobody` (setpriv) on a data dir it owns.
 */
import { chownSync } from 'node:fs';
import { mountTool, safeRemove, tempDir } from './lib/fsutil.ts';
import { runNodeScript } from './lib/proc.ts';
import { ratioResult, size, skipped, type BenchOptions, type BenchResult } from './lib/results.ts';

type Phases = Record<string, number>;

async function side(mode: 'berth' | 'floor', n: number, asNobody: boolean, tool: string | null, opts: BenchOptions): Promise<Phases> {
  const dir = tempDir(`p1-${mode}`);
  try {
    if (asNobody) chownSync(dir, 65534, 65534);
    return await runNodeScript<Phases>(
      'p1-child.ts',
      { mode, n, dir, tool },
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
  const n = size(opts, 'p1-n', 300, 10_000);
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
    for (const { label, nobody } of runs) {
      opts.log(`P1 ${label}: floor, n=${n}`);
      const f = await side('floor', n, nobody, tool, opts);
      opts.log(`P1 ${label}: berth, n=${n}`);
      const b = await side('berth', n, nobody, tool, opts);
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
  } finally {
    await safeRemove(toolDir);
  }
  return out;
}
