/**
 * What a task's chart starts with, as a pure function of its settings (decided once per alloc,
 * `policy/task-settings.ts`) and where its alloc has it now: its state, its event count, its
 * gate, and a handle to reattach. The alloc chart spawns each task with it.
 * @module
 */
import type { TaskState } from '../../model/types.ts';
import type { TaskHandle } from '../../model/task-handle.ts';
import type { TaskMachineInput } from './context.ts';

/** Where the alloc has a task when it spawns its chart. */
export interface TaskStart {
  initialState: TaskState;
  /** Events appended so far; default the state's own count. */
  eventSeq?: number;
  gateOpen: boolean;
  now: number;
  /** A handle saved by an earlier client, to reattach. */
  restoredHandle?: TaskHandle;
}

/** The task chart's input for a task with these settings, started here. */
export function taskMachineInput(settings: Omit<TaskMachineInput, keyof TaskStart>, start: TaskStart): TaskMachineInput {
  return {
    ...settings,
    initialState: start.initialState,
    eventSeq: start.eventSeq ?? start.initialState.events.length,
    gateOpen: start.gateOpen,
    now: start.now,
    ...(start.restoredHandle ? { restoredHandle: start.restoredHandle } : {}),
  };
}
