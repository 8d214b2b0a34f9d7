/** The task chart's wing: the chart, its data, its pure actions and its input. @module */
export { taskMachine } from './chart.ts';
export { taskMachineInput, type TaskStart } from './input.ts';
export type {
  ExitOutput,
  KillTaskInput,
  PrestartOutput,
  PrestartTaskInput,
  RecoverOutput,
  SignalTaskInput,
  StartOutput,
  StartTaskInput,
  TaskContext,
  TaskHandleInput,
  TaskHooks,
  TaskMachineEvent,
  TaskMachineInput,
  TaskServicesInput,
  TemplateEffectsInput,
  TaskStateReport,
} from './context.ts';
