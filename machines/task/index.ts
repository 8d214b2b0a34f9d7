/** The task chart's wing: the chart, its data, its pure actions and its input. @module */
export { taskMachine } from './chart.ts';
export { taskMachineInput, type TaskStart } from './input.ts';
// The chart's data, its events and its actors' inputs and outputs: every type of context.ts.
export type * from './context.ts';
