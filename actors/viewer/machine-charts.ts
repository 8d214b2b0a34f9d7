/**
 * berth's own charts (the alloc and task charts, `machines/alloc/` and `machines/task/`), laid out once per process.
 * @module
 */
import { allocMachine } from '../../machines/alloc/index.ts';
import { taskMachine } from '../../machines/task/index.ts';
import { chartOf } from './chart.ts';
import { layoutChart, type PlacedChart } from './layout.ts';

/** The charts a viewer page draws, keyed by the actor kind they belong to. */
export interface BerthCharts {
  alloc: PlacedChart;
  task: PlacedChart;
}

let cached: Promise<BerthCharts> | undefined;

/** The alloc and task charts, laid out (cached after the first call). */
export function berthCharts(): Promise<BerthCharts> {
  cached ??= (async () => ({ alloc: await layoutChart(chartOf(allocMachine, 'alloc')), task: await layoutChart(chartOf(taskMachine, 'task')) }))();
  cached.catch(() => (cached = undefined));
  return cached;
}
