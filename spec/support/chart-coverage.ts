/**
 * Transition coverage of the alloc, task and watcher charts across the suite: the chart specs
 * and the simulator spec pass {@link chartCoverage}'s observer as `inspect`; after the suite,
 * when all of them ran, the table (transition, times taken) is printed and every transition must
 * have been taken at least once.
 */
import { Coverage } from '../../sim/coverage.ts';

/** The suite's coverage counter. */
export const chartCoverage = new Coverage();

/**
 * Which contributors ran (the check needs all of them, so single-file runs skip it): the alloc and
 * task chart specs (`spec/machines/alloc.machine.spec.ts`, `spec/machines/task.machine.spec.ts`,
 * charts in `machines/alloc/` and `machines/task/`) and the simulator spec.
 */
export const coverageRan = new Set<string>();
const CONTRIBUTORS = ['alloc.machine', 'task.machine', 'sim'];

export const mochaHooks = {
  afterAll() {
    if (!CONTRIBUTORS.every((c) => coverageRan.has(c))) return;
    process.stdout.write(`\nChart transition coverage (sim + specs):\n${chartCoverage.table()}`);
    const missing = chartCoverage.missing();
    if (missing.length) throw new Error(`chart transitions never taken:\n  ${missing.map((m) => m.label).join('\n  ')}`);
  },
};
