/**
 * P2, memory: heap per running allocation (one idle mock task) at N allocations, after GC,
 * beside a bare five-state actor; and whether the heap returns to within 5% of its start once
 * all are destroyed. Each side in its own `node --expose-gc` child.
 */
import { safeRemove, tempDir } from './lib/fsutil.ts';
import { runNodeScript } from './lib/proc.ts';
import { absoluteResult, size, type BenchOptions, type BenchResult } from './lib/results.ts';

interface Out {
  perAllocBytes: number;
  start: number;
  mid: number;
  end?: number;
  returnRatio?: number;
}

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  const n = size(opts, 'p2-n', 200, 10_000);
  const side = async (mode: 'berth' | 'floor') => {
    const dir = tempDir('p2');
    try {
      return await runNodeScript<Out>(
        'p2-child.ts',
        { mode, n, dir },
        { nodeArgs: ['--expose-gc'], onLog: (l) => opts.log(`  [p2 ${mode}] ${l}`), timeoutMs: 15 * 60_000 },
      );
    } finally {
      await safeRemove(dir);
    }
  };
  opts.log(`P2 floor, n=${n}`);
  const f = await side('floor');
  opts.log(`P2 berth, n=${n}`);
  const b = await side('berth');
  const ret = b.returnRatio!;
  return [
    absoluteResult({
      id: 'P2',
      name: `heap per running alloc x${n}`,
      unit: 'KB',
      value: b.perAllocBytes / 1024,
      floor: f.perAllocBytes / 1024,
      better: 'lower',
      limit: 20,
      extraTarget: 'heap back within 5% of start after destroy',
      extraMet: Math.abs(ret - 1) <= 0.05,
      details: { n, berth: b, floor: f, heapReturnPct: (ret - 1) * 100 },
    }),
  ];
}
