/** The alloc chart's wing: the chart, its data, its pure actions and its input. @module */
export { allocMachine, ALLOC_STATES } from './chart.ts';
export {
  taskActorId,
  type AllocContext,
  type AllocHookKind,
  type AllocMachineEvent,
  type AllocMachineInput,
  type MigrateDataInput,
  type PendingRestart,
  type RunHooksInput,
  type TaskSettings,
} from './context.ts';
export { updateQueueMachine, type ReleasedUpdateEvent, type UpdateQueueContext, type UpdateQueueEvent } from './update-queue.ts';
export { allocMachineInput, type AllocSources, type AllocStart, type SavedAlloc } from './input.ts';
