import type { BenchOptions, BenchResult } from './lib/results.ts';
export async function run(_o: BenchOptions): Promise<BenchResult[]> { return []; }
